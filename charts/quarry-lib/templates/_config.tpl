{{/* values `config:` → the service's live ConfigMap (named by its rbac.yaml) (keys as in the service's
     README, Tekton's names where they overlap). Values are strings in a ConfigMap, so each is quoted. */}}
{{- define "quarry-lib.configMap" -}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "quarry-lib.configMapName" . }}
  namespace: {{ .Release.Namespace }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}
data:{{ if not .Values.config }} {}{{ end }}
  {{- range $k, $v := .Values.config }}
  {{ $k }}: {{ $v | toString | quote }}
  {{- end }}
{{- end -}}
