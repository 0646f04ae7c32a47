{{- define "quarry-lib.serviceAccount" -}}
{{- $rbac := include "quarry-lib.rbac" . | fromJson }}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $rbac.serviceAccountName }}
  namespace: {{ .Release.Namespace }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}
  {{- with .Values.serviceAccount.annotations }}
  annotations: {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: true
{{- end -}}

{{/* clusterRules → ClusterRole + ClusterRoleBinding; namespaceRules → Role + RoleBinding in the
     release namespace; every opt-in key (optInClusterRoles: rulesKey → ClusterRole name) → an
     unbound ClusterRole a namespace binds to opt in (the harness binds the same rules). */}}
{{- define "quarry-lib.rbacObjects" -}}
{{- $rbac := include "quarry-lib.rbac" . | fromJson }}
{{- $name := include "quarry-lib.name" . }}
{{- $sa := $rbac.serviceAccountName }}
{{- if $rbac.clusterRules }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $name }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}
rules: {{- toYaml $rbac.clusterRules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $name }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {{ $name }}}
subjects:
  - {kind: ServiceAccount, name: {{ $sa }}, namespace: {{ .Release.Namespace }}}
{{- end }}
{{- if $rbac.namespaceRules }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}
  namespace: {{ .Release.Namespace }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}
rules: {{- toYaml $rbac.namespaceRules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}
  namespace: {{ .Release.Namespace }}
  labels: {{- include "quarry-lib.labels" . | nindent 4 }}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: {{ $name }}}
subjects:
  - {kind: ServiceAccount, name: {{ $sa }}, namespace: {{ .Release.Namespace }}}
{{- end }}
{{- range $key, $role := .Values.optInClusterRoles }}
{{- $rules := index $rbac $key }}
{{- if not $rules }}{{ fail (printf "optInClusterRoles: rbac.yaml has no %s" $key) }}{{ end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $role }}
  labels: {{- include "quarry-lib.labels" $ | nindent 4 }}
rules: {{- toYaml $rules | nindent 2 }}
{{- end }}
{{- /* secretReads: [{namespace, secrets}] → a Role allowing get on exactly those Secrets there
       (an operator-named Secret, e.g. git's api-token-secret-name), bound to the service. */}}
{{- range $i, $grant := .Values.secretReads }}
{{- if or (not $grant.namespace) (not $grant.secrets) }}{{ fail "secretReads: each entry needs namespace and secrets" }}{{ end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}-secret-reads-{{ $i }}
  namespace: {{ $grant.namespace }}
  labels: {{- include "quarry-lib.labels" $ | nindent 4 }}
rules:
  - apiGroups: [""]
    resources: [secrets]
    resourceNames: {{- toYaml $grant.secrets | nindent 6 }}
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}-secret-reads-{{ $i }}
  namespace: {{ $grant.namespace }}
  labels: {{- include "quarry-lib.labels" $ | nindent 4 }}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: {{ $name }}-secret-reads-{{ $i }}}
subjects:
  - {kind: ServiceAccount, name: {{ $sa }}, namespace: {{ $.Release.Namespace }}}
{{- end }}
{{- /* tektonCacheConfig: "namespace/name" of Tekton's resolver-cache-config → a Role reading exactly
       that ConfigMap there (the SDK watches it by name), bound to the service. */}}
{{- with .Values.tektonCacheConfig }}
{{- $ref := splitList "/" . }}
{{- if ne (len $ref) 2 }}{{ fail "tektonCacheConfig must be namespace/name" }}{{ end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}-tekton-cache-config
  namespace: {{ index $ref 0 }}
  labels: {{- include "quarry-lib.labels" $ | nindent 4 }}
rules:
  - apiGroups: [""]
    resources: [configmaps]
    resourceNames: [{{ index $ref 1 | quote }}]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}-tekton-cache-config
  namespace: {{ index $ref 0 }}
  labels: {{- include "quarry-lib.labels" $ | nindent 4 }}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: {{ $name }}-tekton-cache-config}
subjects:
  - {kind: ServiceAccount, name: {{ $sa }}, namespace: {{ $.Release.Namespace }}}
{{- end }}
{{- end -}}
