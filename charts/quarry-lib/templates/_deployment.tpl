{{- define "quarry-lib.deployment" -}}
{{- $rbac := include "quarry-lib.rbac" . | fromJson }}
{{- $le := .Values.leaderElection }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "quarry-lib.name" . }}
  namespace: {{ .Release.Namespace }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}
spec:
  {{- if not .Values.autoscaling.enabled }}
  replicas: {{ .Values.replicas }}
  {{- end }}
  selector:
    matchLabels: {{- include "quarry-lib.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels: {{- include "quarry-lib.labels" . | nindent 8 }}
        {{- with .Values.podLabels }}{{ toYaml . | nindent 8 }}{{ end }}
      annotations:
        {{- /* a changed config rolls nothing (the services watch their ConfigMap live); only
               values that become env need a new pod, and those change the template anyway */}}
        {{- with .Values.podAnnotations }}{{ toYaml . | nindent 8 }}{{ end }}
    spec:
      serviceAccountName: {{ $rbac.serviceAccountName }}
      # above the runtime's 25 s SIGTERM budget (QUARRY_SHUTDOWN_TIMEOUT_MS), so Leases get released
      terminationGracePeriodSeconds: 30
      {{- with .Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with include "quarry-lib.imagePullSecrets" (dict "global" .Values.global "own" .Values.imagePullSecrets) }}{{ . | nindent 6 }}{{ end }}
      {{- /* values podSecurityContext / securityContext: a key set to null (--set podSecurityContext.runAsUser=null)
             is left out, e.g. the fixed uid/gid where the platform assigns its own (OpenShift) */}}
      {{- with .Values.podSecurityContext }}
      securityContext: {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ .Values.service }}
          image: {{ include "quarry-lib.imageRef" (dict "image" .Values.image "global" .Values.global "appVersion" .Chart.AppVersion) | quote }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          ports:
            - {name: metrics, containerPort: 8080, protocol: TCP}
            {{- with .Values.extraPorts }}{{ toYaml . | nindent 12 }}{{ end }}
          env:
            # the Lease holder identity (docs/decisions.md, HA by buckets)
            - name: POD_NAME
              valueFrom: {fieldRef: {fieldPath: metadata.name}}
            # where the service's ConfigMap and Leases live
            - name: QUARRY_SYSTEM_NAMESPACE
              valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
            # the pipe resolver refuses strategies that would run pods as itself
            - name: QUARRY_SERVICE_ACCOUNT
              valueFrom: {fieldRef: {fieldPath: spec.serviceAccountName}}
            - {name: QUARRY_OPS_PORT, value: "8080"}
            {{- with .Values.concurrency }}
            - {name: QUARRY_CONCURRENCY, value: {{ . | quote }}}
            {{- end }}
            - {name: QUARRY_LEADER_ELECTION, value: {{ ternary "on" "off" $le.enabled | quote }}}
            - {name: QUARRY_BUCKETS, value: {{ $le.buckets | quote }}}
            - {name: QUARRY_SHARD_LABEL, value: {{ ternary "on" "off" (or $le.shardLabel .Values.global.shardLabel) | quote }}}
            - {name: QUARRY_LEASE_DURATION, value: {{ $le.leaseDuration | quote }}}
            - {name: QUARRY_LEASE_RENEW_DEADLINE, value: {{ $le.renewDeadline | quote }}}
            - {name: QUARRY_LEASE_RETRY_PERIOD, value: {{ $le.retryPeriod | quote }}}
            # the ConfigMap owns the bucket Leases: helm uninstall deletes it, the GC the Leases
            - {name: QUARRY_LEASE_OWNER_CONFIGMAP, value: {{ include "quarry-lib.configMapName" . | quote }}}
            {{- with .Values.watchNamespace }}
            - {name: QUARRY_WATCH_NAMESPACE, value: {{ . | quote }}}
            {{- end }}
            {{- $tekton := include "quarry-lib.tektonConfig" . | fromJson }}
            {{- with $tekton.namespace }}
            # Tekton's ConfigMap of the same name there, read in place over the own one (its Role: quarry-lib.rbacObjects)
            - {name: QUARRY_TEKTON_CONFIG_NAMESPACE, value: {{ . | quote }}}
            {{- end }}
            {{- with $tekton.cache }}
            # Tekton's resolver-cache-config, read in place (its Role: quarry-lib.rbacObjects)
            - {name: QUARRY_TEKTON_CACHE_CONFIG, value: {{ . | quote }}}
            {{- end }}
            {{- with include "quarry-lib.tracingEnv" . | trim }}{{ . | nindent 12 }}{{ end }}
            {{- with .Values.nodeOptions }}
            - {name: NODE_OPTIONS, value: {{ . | quote }}}
            {{- end }}
            {{- range $k, $v := .Values.env }}
            - {name: {{ $k }}, value: {{ $v | toString | quote }}}
            {{- end }}
            {{- with .Values.extraEnv }}{{ toYaml . | nindent 12 }}{{ end }}
          livenessProbe:
            httpGet: {path: /healthz, port: metrics}
            periodSeconds: 10
            failureThreshold: 3
          readinessProbe:
            httpGet: {path: /readyz, port: metrics}
            periodSeconds: 5
          {{- with .Values.resources }}
          resources: {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with .Values.securityContext }}
          securityContext: {{- toYaml . | nindent 12 }}
          {{- end }}
          volumeMounts:
            # the root filesystem is read-only; caches and git's temp files go here
            - {name: tmp, mountPath: /tmp}
            {{- with .Values.extraVolumeMounts }}{{ toYaml . | nindent 12 }}{{ end }}
      volumes:
        - name: tmp
          emptyDir: {{- with .Values.tmpSizeLimit }} {sizeLimit: {{ . }}}{{ else }} {}{{ end }}
        {{- with .Values.extraVolumes }}{{ toYaml . | nindent 8 }}{{ end }}
      {{- with .Values.nodeSelector }}
      nodeSelector: {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations: {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.affinity }}
      affinity: {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.topologySpreadConstraints }}
      {{- /* a constraint without labelSelector spreads this service's pods (argo-cd's convention) */}}
      {{- $own := dict "labelSelector" (dict "matchLabels" (include "quarry-lib.selectorLabels" $ | fromYaml)) }}
      {{- $constraints := list }}
      {{- range . }}{{ $constraints = append $constraints (ternary . (merge (deepCopy $own) .) (hasKey . "labelSelector")) }}{{ end }}
      topologySpreadConstraints: {{- toYaml $constraints | nindent 8 }}
      {{- end }}
{{- end -}}


{{/* OTEL_* env for trace export: the service's tracing values over the umbrella's global.tracing;
     nothing when no endpoint is set (spans then stay in the process). */}}
{{- define "quarry-lib.tracingEnv" -}}
{{- $global := default dict (default dict .Values.global).tracing -}}
{{- $own := default dict .Values.tracing -}}
{{- $endpoint := $own.otlpEndpoint | default $global.otlpEndpoint -}}
{{- if $endpoint }}
- {name: OTEL_EXPORTER_OTLP_ENDPOINT, value: {{ $endpoint | quote }}}
{{- with $own.headers | default $global.headers }}
- {name: OTEL_EXPORTER_OTLP_HEADERS, value: {{ . | quote }}}
{{- end }}
{{- with $own.sampler | default $global.sampler }}
- {name: OTEL_TRACES_SAMPLER, value: {{ . | quote }}}
{{- end }}
{{- with $own.samplerArg | default $global.samplerArg }}
- {name: OTEL_TRACES_SAMPLER_ARG, value: {{ . | toString | quote }}}
{{- end }}
# which replica wrote a span ($(VAR) expands the env entries above)
- {name: OTEL_RESOURCE_ATTRIBUTES, value: "k8s.pod.name=$(POD_NAME),k8s.namespace.name=$(QUARRY_SYSTEM_NAMESPACE)"}
{{- end }}
{{- end -}}
