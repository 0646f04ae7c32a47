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
     without them would fail the whole install. global.monitoring.skipCapabilitiesCheck renders them
     without asking (GitOps tools and `helm template` render offline, where nothing is served). */}}
{{- define "quarry-lib.monitoring" -}}
{{- $skipCheck := (default dict (default dict .Values.global).monitoring).skipCapabilitiesCheck }}
{{- $job := printf "%s-metrics" (include "quarry-lib.name" .) }}
{{- if and .Values.serviceMonitor.enabled (or $skipCheck (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor")) }}
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
{{- if and .Values.prometheusRule.enabled (or $skipCheck (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PrometheusRule")) }}
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
          expr: sum(quarry_buckets_held{job="{{ $job }}"}) < max(quarry_buckets_total{job="{{ $job }}"})
          for: 5m
          labels: {severity: warning}
          annotations:
            summary: "{{ .Values.service }}: some leader-election bucket has no leader"
            runbook_url: {{ include "quarry-lib.runbookUrl" (dict "root" . "alert" "QuarryBucketUnowned") | quote }}
        {{- /* the lifecycle controller's: requests it ended because no resolver finished them in time */}}
        {{- with .Values.prometheusRule.resolutionTimeouts }}
        {{- if .enabled }}
        # requests the lifecycle controller timed out, by type: a resolver down, stuck or too slow for the deadline
        - alert: QuarryResolutionTimeouts
          expr: sum by (type) (increase(quarry_resolution_requests_timed_out_total{job="{{ $job }}"}[{{ .window }}])) > {{ .threshold }}
          for: {{ .for }}
          labels: {severity: {{ .severity }}}
          annotations:
            summary: {{ printf "ResolutionRequests of type {{ $labels.type }} timed out: more than %v in %s" .threshold .window | quote }}
            runbook_url: {{ include "quarry-lib.runbookUrl" (dict "root" $ "alert" "QuarryResolutionTimeouts") | quote }}
        {{- end }}
        {{- end }}
        {{- with .Values.prometheusRule.extraRules }}{{ toYaml . | nindent 8 }}{{ end }}
{{- end }}
{{- end -}}
