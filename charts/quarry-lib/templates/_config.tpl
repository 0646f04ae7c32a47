{{/* values `config:` (and `egress:`) → the service's live ConfigMap (named by its rbac.yaml) (keys as in the service's
     README, Tekton's names where they overlap). Values are strings in a ConfigMap, so each is quoted. */}}
{{- define "quarry-lib.configMap" -}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "quarry-lib.configMapName" . }}
  namespace: {{ .Release.Namespace }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}
{{- $data := deepCopy (.Values.config | default dict) }}
{{- /* egress: (resolvers that fetch from the network) → the SDK's ca-bundle, proxy, no-proxy,
       blocked-networks keys; a key set in config wins */ -}}
{{- with .Values.egress }}
{{- range $key, $value := dict "ca-bundle" .caBundle "proxy" .proxy "no-proxy" .noProxy "blocked-networks" .blockedNetworks }}
{{- if and $value (not (hasKey $data $key)) }}{{ $_ := set $data $key $value }}{{ end }}
{{- end }}
{{- end }}
data:{{ if not $data }} {}{{ end }}
  {{- range $k, $v := $data }}
  {{ $k }}: {{ $v | toString | quote }}
  {{- end }}
{{- end -}}
