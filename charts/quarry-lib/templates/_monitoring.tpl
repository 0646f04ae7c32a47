{{- define "quarry-lib.metricsService" -}}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "quarry-lib.name" . }}-metrics
  namespace: {{ .Release.Namespace }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}
spec:
  selector: {{- include "quarry-lib.selectorLabels" . | nindent 4 }}
  ports:
    - {name: metrics, port: 8080, targetPort: metrics, protocol: TCP}
{{- end -}}

{{/* Only when the Prometheus Operator's CRDs are served: an enabled ServiceMonitor on a cluster
     without them would fail the whole install. */}}
{{- define "quarry-lib.monitoring" -}}
{{- if and .Values.serviceMonitor.enabled (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor") }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "quarry-lib.name" . }}
  namespace: {{ .Release.Namespace }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}{{ with .Values.serviceMonitor.labels }}{{ toYaml . | nindent 4 }}{{ end }}
spec:
  selector:
    matchLabels: {{- include "quarry-lib.selectorLabels" . | nindent 6 }}
  endpoints:
    - {port: metrics, path: /metrics, interval: {{ .Values.serviceMonitor.interval }}}
{{- end }}
{{- if and .Values.prometheusRule.enabled (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PrometheusRule") }}
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ include "quarry-lib.name" . }}
  namespace: {{ .Release.Namespace }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}{{ with .Values.prometheusRule.labels }}{{ toYaml . | nindent 4 }}{{ end }}
spec:
  groups:
    - name: {{ include "quarry-lib.name" . }}
      rules:
        # a bucket nobody leads: its keys are reconciled by no replica (docs/decisions.md, HA by buckets)
        - alert: QuarryBucketUnowned
          expr: sum(quarry_buckets_held{job="{{ include "quarry-lib.name" . }}-metrics"}) < max(quarry_buckets_total{job="{{ include "quarry-lib.name" . }}-metrics"})
          for: 5m
          labels: {severity: warning}
          annotations:
            summary: "{{ .Values.service }}: some leader-election bucket has no leader"
        {{- with .Values.prometheusRule.extraRules }}{{ toYaml . | nindent 8 }}{{ end }}
{{- end }}
{{- end -}}
