{{/* The service's rbac.yaml (charts/<service>/rbac.yaml), the one source of its RBAC. */}}
{{- define "quarry-lib.rbac" -}}
{{- $raw := .Files.Get "rbac.yaml" -}}
{{- if not $raw }}{{ fail (printf "%s: rbac.yaml missing beside Chart.yaml" .Chart.Name) }}{{ end -}}
{{- $raw | fromYaml | toJson -}}
{{- end -}}

{{/* Fixed names: the ServiceAccount comes from rbac.yaml (the e2e harness binds the same one) and the
     Leases and ConfigMap are named by service, so one install per namespace and service. */}}
{{- define "quarry-lib.name" -}}quarry-{{ .Values.service }}{{- end -}}

{{/* The service's ConfigMap name, from the configmaps rule of rbac.yaml's namespaceRules (the one
     ConfigMap the service may read: e.g. Tekton's `bundleresolver-config` for the bundle resolver). */}}
{{- define "quarry-lib.configMapName" -}}
{{- $rbac := include "quarry-lib.rbac" . | fromJson -}}
{{- $name := "" -}}
{{- range $rbac.namespaceRules }}
{{- if and (has "configmaps" .resources) .resourceNames (not $name) }}{{ $name = first .resourceNames }}{{ end }}
{{- end -}}
{{- if not $name }}{{ fail "rbac.yaml: no configmaps rule with resourceNames in namespaceRules" }}{{ end -}}
{{- $name -}}
{{- end -}}

{{/* Tekton's ConfigMaps read in place, for a chart whose values have tektonConfigNamespace (the
     resolvers Tekton also ships): {"namespace": where Tekton keeps its resolver ConfigMaps (the
     chart's value, else the umbrella's global.tektonConfigNamespace; "" = not read), "cache":
     "namespace/name" of resolver-cache-config (tektonCacheConfig, else the one in that namespace)}. */}}
{{- define "quarry-lib.tektonConfig" -}}
{{- $ns := "" -}}
{{- if hasKey .Values "tektonConfigNamespace" }}
{{- $ns = .Values.tektonConfigNamespace | default (default dict .Values.global).tektonConfigNamespace | default "" -}}
{{- end -}}
{{- $cache := .Values.tektonCacheConfig | default "" -}}
{{- if and $ns (not $cache) }}{{ $cache = printf "%s/resolver-cache-config" $ns }}{{ end -}}
{{- if $cache }}{{ if ne (len (splitList "/" $cache)) 2 }}{{ fail "tektonCacheConfig must be namespace/name" }}{{ end }}{{ end -}}
{{- dict "namespace" $ns "cache" $cache | toJson -}}
{{- end -}}

{{- define "quarry-lib.selectorLabels" -}}
app.kubernetes.io/name: {{ .Values.service }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "quarry-lib.labels" -}}
{{ include "quarry-lib.selectorLabels" . }}
app.kubernetes.io/part-of: quarry
app.kubernetes.io/component: {{ .Values.component | default "controller" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* global.mode (the umbrella's): "fleet", one Deployment per service, or "all-in-one", one
     process (charts/quarry's allInOne) running every enabled service; then a service chart renders
     only what that process needs of it: its ConfigMap and its RBAC, bound to quarry-all-in-one. */}}
{{- define "quarry-lib.allInOne" -}}
{{- $mode := (default dict .Values.global).mode | default "fleet" -}}
{{- if not (has $mode (list "fleet" "all-in-one")) }}{{ fail (printf "global.mode must be fleet or all-in-one, got %q" $mode) }}{{ end -}}
{{- if eq $mode "all-in-one" }}true{{ end -}}
{{- end -}}

{{/* The ServiceAccount the service's RBAC is bound to: its own (rbac.yaml), or in all-in-one mode the
     one process's (charts/quarry/rbac.yaml names the same). */}}
{{- define "quarry-lib.boundServiceAccount" -}}
{{- if include "quarry-lib.allInOne" . }}quarry-all-in-one{{ else }}{{ (include "quarry-lib.rbac" . | fromJson).serviceAccountName }}{{ end -}}
{{- end -}}

{{/* Everything a service chart renders: its one template is {{ include "quarry-lib.all" . }}. */}}
{{- define "quarry-lib.all" -}}
{{- if include "quarry-lib.allInOne" . }}
{{ include "quarry-lib.rbacObjects" . }}
{{ include "quarry-lib.configMap" . }}
{{- else }}
{{ include "quarry-lib.serviceAccount" . }}
{{ include "quarry-lib.rbacObjects" . }}
{{ include "quarry-lib.configMap" . }}
{{ include "quarry-lib.deployment" . }}
{{ include "quarry-lib.metricsService" . }}
{{ include "quarry-lib.monitoring" . }}
{{ include "quarry-lib.availability" . }}
{{- end }}
{{- end -}}

{{/* The image reference: (registry/)repository, then @digest when image.digest is set (the tag is
     then not written: the digest alone names the image), else :tag. registry: image.registry, else
     global.image.registry ("" = no registry part); tag: image.tag, else global.image.tag, else the
     chart's appVersion. Takes dict "image" "global" "appVersion" so the umbrella's test hook can
     name a service's image from outside that service's chart. */}}
{{- define "quarry-lib.imageRef" -}}
{{- $image := .image -}}
{{- $global := default dict (default dict .global).image -}}
{{- $registry := $image.registry | default $global.registry | default "" -}}
{{- $name := ternary (printf "%s/%s" $registry $image.repository) $image.repository (ne $registry "") -}}
{{- if $image.digest -}}
{{- if not (regexMatch "^sha256:[0-9a-f]{64}$" $image.digest) }}{{ fail (printf "image.digest must be sha256:<64 hex digits>, got %q" $image.digest) }}{{ end -}}
{{- printf "%s@%s" $name $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $name ($image.tag | default $global.tag | default .appVersion | toString) -}}
{{- end -}}
{{- end -}}

{{/* imagePullSecrets: global.imagePullSecrets, then the service's own (each {name: …} or a bare name). */}}
{{- define "quarry-lib.imagePullSecrets" -}}
{{- $secrets := list -}}
{{- range concat ((default dict .global).imagePullSecrets | default list) (.own | default list) -}}
{{- $entry := ternary (dict "name" .) . (kindIs "string" .) -}}
{{- if not (has $entry $secrets) }}{{ $secrets = append $secrets $entry }}{{ end -}}
{{- end -}}
{{- with $secrets -}}
imagePullSecrets: {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{/* An alert's runbook: global.monitoring.runbookBaseUrl plus the alert's name, lower-cased
     (docs/troubleshooting.md has one section per alert). Takes dict "root" . "alert" NAME. */}}
{{- define "quarry-lib.runbookUrl" -}}
{{- $monitoring := default dict (default dict .root.Values.global).monitoring -}}
{{- printf "%s%s" ($monitoring.runbookBaseUrl | default "https://github.com/quarry-dev/quarry/blob/main/docs/troubleshooting.md#") (lower .alert) -}}
{{- end -}}
