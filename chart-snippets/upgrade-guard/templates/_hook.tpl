{{- /*
upgrade-guard.hook: everything the guard needs, as hooks on pre-install, pre-upgrade and
pre-rollback. Include it once from the operator chart, passing the controller image the
chart's Deployment runs, rendered from the same values expression:

  {{ include "upgrade-guard.hook" (dict "root" . "controllerImage" (include "mychart.image" .)) }}

or, for several controller images (one Deployment each), each under its slot: the values
key that sets it, so a way out can name `--set SLOT.tag=...` (controllerImage is the slot
`image`):

  {{ include "upgrade-guard.hook" (dict "root" . "controllerImages" (dict
       "image" (include "mychart.image" .)
       "webhook.image" (include "mychart.webhookImage" .))) }}

The operator chart's files carry the CRD bundle (`upgrade-guard pack`), the image table
and, optionally, the policy. Every object also carries Argo CD's hook annotations: Argo CD
ignores Helm's once an object has any of its own.
*/ -}}
{{- define "upgrade-guard.hook" -}}
{{- $root := .root -}}
{{- $v := index $root.Values "upgrade-guard" -}}
{{- $controllerImages := .controllerImages | default dict -}}
{{- if .controllerImage }}{{ $controllerImages = merge (dict "image" .controllerImage) $controllerImages }}{{ end -}}
{{- if not $controllerImages }}{{ fail "upgrade-guard.hook: pass controllerImage (or controllerImages, SLOT: image), rendered as the controller Deployments render their images" }}{{ end -}}
{{- $name := printf "%s-upgrade-guard" $root.Release.Name | trunc 63 | trimSuffix "-" -}}
{{- $crds := $root.Files.Get $v.files.crds -}}
{{- if not $crds }}{{ fail (printf "upgrade-guard: chart file %s is missing: run `upgrade-guard pack CRD_DIR %s`" $v.files.crds $v.files.crds) }}{{ end -}}
{{- $images := $root.Files.Get $v.files.images -}}
{{- if not $images }}{{ fail (printf "upgrade-guard: chart file %s (controller image -> counters) is missing" $v.files.images) }}{{ end -}}
{{- $policy := "" -}}
{{- if $v.files.policy }}{{ $policy = $root.Files.Get $v.files.policy }}{{ end -}}
{{- $storedState := list -}}
{{- if $policy }}{{ $storedState = get (fromYaml $policy) "stored-state" | default list }}{{ end -}}
{{- $crdNames := $v.crdNames -}}
{{- if not $crdNames }}{{ fail "upgrade-guard.crdNames: list the chart's CRDs (the hook may get these and list their objects only)" }}{{ end -}}
{{- /* list: the objects of the chart's CRDs (evidence) and the stored-state resources,
       as RESOURCE.GROUP (a CRD's name is PLURAL.GROUP), grouped by API group. */ -}}
{{- $resources := $crdNames -}}
{{- range $storedState }}{{ $resources = append $resources .resource }}{{ end -}}
{{- $listed := dict -}}
{{- range $resources -}}
{{- $parts := splitn "." 2 . -}}
{{- $group := $parts._1 | default "" -}}
{{- $_ := set $listed $group (append (get $listed $group | default list) $parts._0 | uniq | sortAlpha) -}}
{{- end -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  annotations:
    {{- include "upgrade-guard.annotations" -10 | nindent 4 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ printf "%s-%s" $root.Release.Namespace $name | trunc 63 | trimSuffix "-" }}
  annotations:
    {{- include "upgrade-guard.annotations" -10 | nindent 4 }}
rules:
  - apiGroups: [apiextensions.k8s.io]
    resources: [customresourcedefinitions]
    verbs: [get]
    resourceNames: {{ toJson $crdNames }}
  {{- range $group, $resources := $listed }}
  - apiGroups: [{{ $group | quote }}]
    resources: {{ toJson $resources }}
    verbs: [list]
  {{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ printf "%s-%s" $root.Release.Namespace $name | trunc 63 | trimSuffix "-" }}
  annotations:
    {{- include "upgrade-guard.annotations" -10 | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ printf "%s-%s" $root.Release.Namespace $name | trunc 63 | trimSuffix "-" }}
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ $root.Release.Namespace }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  annotations:
    {{- include "upgrade-guard.annotations" -10 | nindent 4 }}
data:
  images.yaml: {{ $images | quote }}
  {{- if $policy }}
  policy.yaml: {{ $policy | quote }}
  {{- end }}
binaryData:
  crds.json.gz: {{ $crds | b64enc }}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  annotations:
    {{- include "upgrade-guard.annotations" -5 | nindent 4 }}
    helm.sh/hook-output-log-policy: hook-failed
spec:
  backoffLimit: 0
  activeDeadlineSeconds: {{ $v.activeDeadlineSeconds }}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: upgrade-guard
        app.kubernetes.io/instance: {{ $root.Release.Name }}
    spec:
      restartPolicy: Never
      serviceAccountName: {{ $name }}
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        seccompProfile:
          type: RuntimeDefault
      containers:
        - name: upgrade-guard
          image: {{ if $v.image.digest }}{{ printf "%s@%s" $v.image.repository $v.image.digest }}{{ else }}{{ printf "%s:%s" $v.image.repository $v.image.tag }}{{ end }}
          imagePullPolicy: {{ $v.image.pullPolicy }}
          args:
            - hook
            - --phase={{ if $root.Release.IsInstall }}pre-install{{ else }}pre-upgrade{{ end }}
            - --crds=/etc/upgrade-guard/crds.json.gz
            {{- range $slot, $image := $controllerImages }}
            - --controller-image={{ $slot }}={{ $image }}
            {{- end }}
            - --image-table=/etc/upgrade-guard/images.yaml
            {{- if $policy }}
            - --policy=/etc/upgrade-guard/policy.yaml
            {{- end }}
            {{- range $counter, $value := $v.counters }}
            - --counter={{ $counter }}={{ $value }}
            {{- end }}
            - --timeout={{ $v.timeoutSeconds }}
            {{- if $v.failOpen }}
            - --fail-open
            {{- end }}
          terminationMessagePolicy: FallbackToLogsOnError
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: [ALL]
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          volumeMounts:
            - name: inputs
              mountPath: /etc/upgrade-guard
              readOnly: true
      volumes:
        - name: inputs
          configMap:
            name: {{ $name }}
{{- end -}}

{{- /* Helm's and Argo CD's hook annotations for one weight (Argo CD's sync wave). */ -}}
{{- define "upgrade-guard.annotations" -}}
helm.sh/hook: pre-install,pre-upgrade,pre-rollback
helm.sh/hook-weight: {{ . | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
argocd.argoproj.io/hook: PreSync
argocd.argoproj.io/sync-wave: {{ . | quote }}
argocd.argoproj.io/hook-delete-policy: BeforeHookCreation
{{- end -}}
