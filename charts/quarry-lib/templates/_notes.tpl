{{/* NOTES.txt of a service chart: what was installed, how to check it, where the docs are. */}}
{{- define "quarry-lib.notes" -}}
{{- $name := include "quarry-lib.name" . -}}
Quarry {{ .Values.service }} {{ .Chart.AppVersion }} is installed in namespace {{ .Release.Namespace }}:
Deployment {{ $name }} ({{ include "quarry-lib.imageRef" (dict "image" .Values.image "global" .Values.global "appVersion" .Chart.AppVersion) }}).

Check it:
  kubectl get deployment {{ $name }} -n {{ .Release.Namespace }}
  kubectl logs deployment/{{ $name }} -n {{ .Release.Namespace }}
  kubectl get resolutionrequests -A        # or: quarry get -A

It needs Quarry's CRDs (chart quarry-crds) and the lifecycle controller; the umbrella chart
(quarry) installs every service at once.
Docs: https://github.com/quarry-dev/quarry/blob/main/docs/operator-guide.md
Troubleshooting: https://github.com/quarry-dev/quarry/blob/main/docs/troubleshooting.md
{{- end -}}
