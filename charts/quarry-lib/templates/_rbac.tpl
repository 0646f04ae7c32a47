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
{{- $sa := include "quarry-lib.boundServiceAccount" . }}
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
{{- /* Tekton's ConfigMaps read in place (quarry-lib.tektonConfig): a Role in each namespace involved
       reading exactly those ConfigMaps there (the SDK watches each by name), bound to the service. */}}
{{- $tekton := include "quarry-lib.tektonConfig" . | fromJson }}
{{- $reads := dict }}
{{- with $tekton.namespace }}{{ $_ := set $reads . (list (include "quarry-lib.configMapName" $)) }}{{ end }}
{{- with $tekton.cache }}
{{- $ref := splitList "/" . }}
{{- $_ := set $reads (index $ref 0) (append (get $reads (index $ref 0) | default list) (index $ref 1)) }}
{{- end }}
{{- range $ns, $names := $reads }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}-tekton-config
  namespace: {{ $ns }}
  labels: {{- include "quarry-lib.labels" $ | nindent 4 }}
rules:
  - apiGroups: [""]
    resources: [configmaps]
    resourceNames: {{ $names | uniq | toJson }}
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}-tekton-config
  namespace: {{ $ns }}
  labels: {{- include "quarry-lib.labels" $ | nindent 4 }}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: {{ $name }}-tekton-config}
subjects:
  - {kind: ServiceAccount, name: {{ $sa }}, namespace: {{ $.Release.Namespace }}}
{{- end }}
{{- end -}}
