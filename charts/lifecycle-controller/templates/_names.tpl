{{/* Fixed, as the controller's defaults and rbac.yaml's resourceNames name them. */}}
{{- define "lifecycle-controller.webhookService" -}}quarry-lifecycle-controller-webhook{{- end -}}
{{- define "lifecycle-controller.webhookSecret" -}}quarry-lifecycle-controller-webhook-tls{{- end -}}
