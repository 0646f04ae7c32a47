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
{{- end -}}
