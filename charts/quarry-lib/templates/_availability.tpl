{{- define "quarry-lib.availability" -}}
{{- if .Values.podDisruptionBudget.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "quarry-lib.name" . }}
  namespace: {{ .Release.Namespace }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}
spec:
  maxUnavailable: {{ .Values.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels: {{- include "quarry-lib.selectorLabels" . | nindent 6 }}
{{- end }}
{{- if .Values.autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "quarry-lib.name" . }}
  namespace: {{ .Release.Namespace }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: {{ include "quarry-lib.name" . }}}
  minReplicas: {{ .Values.autoscaling.minReplicas }}
  maxReplicas: {{ .Values.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target: {type: Utilization, averageUtilization: {{ .Values.autoscaling.targetCPUUtilizationPercentage }}}
{{- end }}
{{- if .Values.networkPolicy.enabled }}
---
# Ingress only to the metrics port (and a chart's extraPorts, e.g. the conversion webhook the
# apiserver calls from wherever it runs); egress stays open (apiserver, git hosts, registries vary by install).
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "quarry-lib.name" . }}
  namespace: {{ .Release.Namespace }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels: {{- include "quarry-lib.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress]
  ingress:
    - ports: [{port: metrics, protocol: TCP}]
      {{- with .Values.networkPolicy.metricsFrom }}
      from: {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- range .Values.extraPorts }}
    - ports: [{port: {{ .name }}, protocol: {{ .protocol | default "TCP" }}}]
    {{- end }}
{{- end }}
{{- end -}}
