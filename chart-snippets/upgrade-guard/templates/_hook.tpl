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

What the guard must know about the chart comes from the chart's own files, where
`helm upgrade --reuse-values` cannot keep a stale copy: Chart.yaml's annotations
(upgrade-guard.io/controller-state-version and any other counter the policy pairs with the
image, upgrade-guard.io/crds: every CRD a release of the chart may apply,
upgrade-guard.io/crd-templates: the template files that render them (a subchart's as
charts/SUBCHART/templates/FILE), or none, and optionally
upgrade-guard.io/rbac-templates and webhook-templates: those that render the operator's
ClusterRoles and webhook configurations, which the guard may then get by name), the image
table, and
optionally the policy and the CRD bundle (for Argo CD, which keeps no release record).
Every object also carries Argo CD's hook annotations: Argo CD ignores Helm's once an object
has any of its own.
*/ -}}
{{- define "upgrade-guard.hook" -}}
{{- $root := .root -}}
{{- $v := index $root.Values "upgrade-guard" -}}
{{- $controllerImages := .controllerImages | default dict -}}
{{- if .controllerImage }}{{ $controllerImages = merge (dict "image" .controllerImage) $controllerImages }}{{ end -}}
{{- if not $controllerImages }}{{ fail "upgrade-guard.hook: pass controllerImage (or controllerImages, SLOT: image), rendered as the controller Deployments render their images" }}{{ end -}}
{{- $name := printf "%s-upgrade-guard" $root.Release.Name | trunc 63 | trimSuffix "-" -}}
{{- $chart := include "upgrade-guard.chart" $root | fromJson -}}
{{- $crds := "" -}}
{{- if $v.files.crds }}{{ $crds = $root.Files.Get $v.files.crds }}{{ end -}}
{{- $images := $root.Files.Get $v.files.images -}}
{{- if not $images }}{{ fail (printf "upgrade-guard: chart file %s (controller image -> counters) is missing" $v.files.images) }}{{ end -}}
{{- $policy := "" -}}
{{- if $v.files.policy }}{{ $policy = $root.Files.Get $v.files.policy }}{{ end -}}
{{- $storedState := list -}}
{{- if $policy }}{{ $storedState = get (fromYaml $policy) "stored-state" | default list }}{{ end -}}
{{- $crdNames := $chart.crds -}}
{{- /* list: the objects of the chart's CRDs (evidence, what Helm would delete) and the
       stored-state resources, as RESOURCE.GROUP (a CRD's name is PLURAL.GROUP), grouped
       by API group. */ -}}
{{- $resources := $crdNames -}}
{{- range $storedState }}{{ $resources = append $resources .resource }}{{ end -}}
{{- $listed := dict -}}
{{- range $resources -}}
{{- $parts := splitn "." 2 . -}}
{{- $group := $parts._1 | default "" -}}
{{- $_ := set $listed $group (append (get $listed $group | default list) $parts._0 | uniq | sortAlpha) -}}
{{- end -}}
{{- /* The release records Helm keeps in this namespace (Secrets, default storage driver):
       the pending one (this revision, or above it under a rollback, whose hooks were
       rendered at an earlier revision) and the ones below it, down to the release the
       operation replaces. Get by name only. */ -}}
{{- $records := list -}}
{{- $first := max 1 (sub $root.Release.Revision 16) | int -}}
{{- range $revision := untilStep $first (add $root.Release.Revision 33 | int) 1 -}}
{{- $records = append $records (printf "sh.helm.release.v1.%s.v%d" $root.Release.Name $revision) -}}
{{- end -}}
{{- /* The objects the guard's Job needs, as one hook: Helm writes the whole release record
       again before it runs each hook, so six hooks cost six writes of it (on a chart with a
       1 MB manifest, about 0.25 s each). Helm creates and deletes a List's items together,
       by the List's annotations; Argo CD unpacks it and reads each item's, which carry
       Helm's too, as every reader of the objects one by one expects. */}}
apiVersion: v1
kind: List
metadata:
  name: {{ $name }}
  annotations:
    {{- include "upgrade-guard.helm-hook" -10 | nindent 4 }}
items:
  - apiVersion: v1
    kind: ServiceAccount
    metadata:
      name: {{ $name }}
      namespace: {{ $root.Release.Namespace }}
      annotations:
        {{- include "upgrade-guard.annotations" -10 | nindent 8 }}
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    metadata:
      name: {{ printf "%s-%s" $root.Release.Namespace $name | trunc 63 | trimSuffix "-" }}
      annotations:
        {{- include "upgrade-guard.annotations" -10 | nindent 8 }}
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
      {{- /* The live objects of the names this release renders, by name only (never an empty
             resourceNames, which would grant every object). */ -}}
      {{- range $resource, $names := $chart.live }}
      {{- $group := ternary "rbac.authorization.k8s.io" "admissionregistration.k8s.io" (eq $resource "clusterroles") }}
      - apiGroups: [{{ $group }}]
        resources: [{{ $resource }}]
        verbs: [get]
        resourceNames: {{ toJson $names }}
      {{- end }}
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRoleBinding
    metadata:
      name: {{ printf "%s-%s" $root.Release.Namespace $name | trunc 63 | trimSuffix "-" }}
      annotations:
        {{- include "upgrade-guard.annotations" -10 | nindent 8 }}
    roleRef:
      apiGroup: rbac.authorization.k8s.io
      kind: ClusterRole
      name: {{ printf "%s-%s" $root.Release.Namespace $name | trunc 63 | trimSuffix "-" }}
    subjects:
      - kind: ServiceAccount
        name: {{ $name }}
        namespace: {{ $root.Release.Namespace }}
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: Role
    metadata:
      name: {{ $name }}
      namespace: {{ $root.Release.Namespace }}
      annotations:
        {{- include "upgrade-guard.annotations" -10 | nindent 8 }}
    rules:
      - apiGroups: [""]
        resources: [secrets]
        verbs: [get]
        resourceNames: {{ toJson $records }}
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: RoleBinding
    metadata:
      name: {{ $name }}
      namespace: {{ $root.Release.Namespace }}
      annotations:
        {{- include "upgrade-guard.annotations" -10 | nindent 8 }}
    roleRef:
      apiGroup: rbac.authorization.k8s.io
      kind: Role
      name: {{ $name }}
    subjects:
      - kind: ServiceAccount
        name: {{ $name }}
        namespace: {{ $root.Release.Namespace }}
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: {{ $name }}
      namespace: {{ $root.Release.Namespace }}
      annotations:
        {{- include "upgrade-guard.annotations" -10 | nindent 8 }}
    data:
      images.yaml: {{ $images | quote }}
      crds.txt: {{ $crdNames | join "\n" | quote }}
      rendered-crds.txt: {{ $chart.rendered | join "\n" | quote }}
      {{- $objects := list }}
      {{- range $resource, $names := $chart.live }}{{ range $names }}{{ $objects = append $objects (printf "%s/%s" $resource .) }}{{ end }}{{ end }}
      live-objects.txt: {{ $objects | join "\n" | quote }}
      {{- if $policy }}
      policy.yaml: {{ $policy | quote }}
      {{- end }}
{{- if $crds }}
    binaryData:
      crds.json.gz: {{ $crds | b64enc }}
{{- end }}
{{- if $crdNames }}
{{- /* The same reads of the chart's CRDs and their objects, kept with the release, not a
       hook: a rollback to a revision older than a CRD runs that revision's guard, whose own
       grant does not name the CRD Helm is about to delete with its objects; the release
       that added it leaves this grant, so that guard reads the CRD and counts its objects.
       Bound to the guard's service account, which exists only while a guard runs. */}}
{{- /* Cut to 63 characters, the hook's ClusterRole's name and this one's would be the
       same for a long namespace: this one ends in a digest of the namespace and release. */}}
{{- $owner := printf "%s-%s" $root.Release.Namespace $name -}}
{{- $kept := printf "%s-reads-%s" ($owner | trunc 46 | trimSuffix "-") ($owner | sha256sum | trunc 10) }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $kept }}
  annotations:
    upgrade-guard.io/guard-grant: "true"
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
  name: {{ $kept }}
  annotations:
    upgrade-guard.io/guard-grant: "true"
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $kept }}
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ $root.Release.Namespace }}
{{- end }}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  annotations:
    {{- include "upgrade-guard.annotations" -5 | nindent 4 }}
    helm.sh/hook-output-log-policy: hook-succeeded,hook-failed
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
            - --release={{ $root.Release.Name }}
            - --namespace={{ $root.Release.Namespace }}
            - --revision={{ $root.Release.Revision }}
            - --crd-names=/etc/upgrade-guard/crds.txt
            - --rendered-crds=/etc/upgrade-guard/rendered-crds.txt
            - --live-objects=/etc/upgrade-guard/live-objects.txt
            {{- if $crds }}
            - --crds=/etc/upgrade-guard/crds.json.gz
            {{- end }}
            {{- range $slot, $image := $controllerImages }}
            - --controller-image={{ $slot }}={{ $image }}
            {{- end }}
            - --image-table=/etc/upgrade-guard/images.yaml
            {{- if $policy }}
            - --policy=/etc/upgrade-guard/policy.yaml
            {{- end }}
            {{- range $counter, $value := $chart.counters }}
            - --counter={{ $counter }}={{ $value }}
            {{- end }}
            - --timeout={{ $v.timeoutSeconds }}
            {{- if $v.failOpen }}
            - --fail-open
            {{- end }}
            - --chart-version={{ $root.Chart.Version }}
            {{- range $v.accept }}
            - {{ printf "--accept=%s" (toJson .) | quote }}
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
{{- if and $v.admissionPolicy ($root.Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy") }}
---
{{ include "upgrade-guard.admission-policy" (dict "root" $root "crds" $crdNames) }}
{{- end }}
{{- end -}}

{{- /* upgrade-guard.admission-policy: a ValidatingAdmissionPolicy and its binding, part of
the release (not hooks: they stay between operations), that hold the counters of the CRDs
the chart lists (.crds) on the paths no hook runs on: a rollback to a revision from before
the adoption, --no-hooks, uninstall, `kubectl apply` of a crds/ folder, Flux's CreateReplace,
Argo CD's prune. The apiserver refuses an UPDATE that lowers crd-schema-version, keeps it with
another crd-schema-digest, lowers controller-state-version or drops one of these annotations,
and a DELETE, unless the live CRD carries the acceptance that names exactly that change
(accept-schema-digest: the digest it goes to, or "none" when dropped;
accept-controller-state-version: the version it goes to, or "none"; accept-delete: "true").
Counters that are not integers are the hook's to judge. It matches these CRDs by name only,
on UPDATE and DELETE only: never another object. Helm keeps both objects (resource-policy)
when it uninstalls the release or stops rendering them, and Argo CD (sync-options) when it
prunes them or deletes the app, as the CRDs it refuses to delete stay: a second `helm uninstall`, or an upgrade that drops the CRDs after one that dropped the
policy, meets it still. Removing them on purpose is a `kubectl delete` (docs/hook.md). */ -}}
{{- define "upgrade-guard.admission-policy" -}}
{{- $root := .root -}}
{{- $name := printf "%s.%s.upgrade-guard.io" $root.Release.Name $root.Release.Namespace -}}
{{- $owner := printf "release %s in namespace %s" $root.Release.Name $root.Release.Namespace -}}
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: {{ $name }}
  labels:
    app.kubernetes.io/name: upgrade-guard
    app.kubernetes.io/instance: {{ $root.Release.Name }}
  annotations:
    helm.sh/resource-policy: keep
    argocd.argoproj.io/sync-options: Prune=false,Delete=false
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - apiGroups: [apiextensions.k8s.io]
        apiVersions: ["*"]
        resources: [customresourcedefinitions]
        operations: [UPDATE, DELETE]
        resourceNames: {{ toJson .crds }}
  variables:
    - name: crd
      expression: oldObject.metadata.name
    - name: live
      expression: "oldObject.metadata.?annotations.orValue({})"
    - name: incoming
      expression: "request.operation == 'DELETE' ? {} : object.metadata.?annotations.orValue({})"
    - name: liveSchema
      expression: "variables.live[?'upgrade-guard.io/crd-schema-version'].orValue('')"
    - name: newSchema
      expression: "variables.incoming[?'upgrade-guard.io/crd-schema-version'].orValue('')"
    - name: liveDigest
      expression: "variables.live[?'upgrade-guard.io/crd-schema-digest'].orValue('')"
    - name: newDigest
      expression: "variables.incoming[?'upgrade-guard.io/crd-schema-digest'].orValue('none')"
    - name: liveState
      expression: "variables.live[?'upgrade-guard.io/controller-state-version'].orValue('')"
    - name: newState
      expression: "variables.incoming[?'upgrade-guard.io/controller-state-version'].orValue('none')"
    - name: schemaAccepted
      expression: "variables.live[?'upgrade-guard.io/accept-schema-digest'].orValue('') == variables.newDigest"
    - name: stateAccepted
      expression: "variables.live[?'upgrade-guard.io/accept-controller-state-version'].orValue('') == variables.newState"
    - name: counters
      expression: >-
        'crd-schema-version ' + (variables.liveSchema == '' ? 'none' : variables.liveSchema)
        + ' -> ' + (variables.newSchema == '' ? 'none' : variables.newSchema)
        + ', crd-schema-digest ' + (variables.liveDigest == '' ? 'none' : variables.liveDigest)
        + ' -> ' + variables.newDigest
        + ', controller-state-version ' + (variables.liveState == '' ? 'none' : variables.liveState)
        + ' -> ' + variables.newState
    - name: acceptSchema
      expression: >-
        'kubectl annotate crd ' + variables.crd + ' upgrade-guard.io/accept-schema-digest='
        + variables.newDigest + ' --overwrite'
    - name: acceptState
      expression: >-
        'kubectl annotate crd ' + variables.crd + ' upgrade-guard.io/accept-controller-state-version='
        + variables.newState + ' --overwrite'
  validations:
    - expression: >-
        request.operation != 'UPDATE' || variables.schemaAccepted
        || !variables.liveSchema.matches('^[0-9]+$') || !variables.newSchema.matches('^[0-9]+$')
        || int(variables.newSchema) >= int(variables.liveSchema)
      messageExpression: >-
        'upgrade-guard ({{ $owner }}): this UPDATE of the CRD ' + variables.crd
        + ' lowers its schema (' + variables.counters + '): objects stored under the newer
        schema may no longer be read, written or validated. To make exactly this change on
        purpose: ' + variables.acceptSchema + ', then run it again'
    - expression: >-
        request.operation != 'UPDATE' || variables.schemaAccepted || variables.liveDigest == ''
        || variables.newSchema != variables.liveSchema || variables.newDigest == 'none'
        || variables.newDigest == variables.liveDigest
      messageExpression: >-
        'upgrade-guard ({{ $owner }}): this UPDATE of the CRD ' + variables.crd
        + ' changes its schema under the same crd-schema-version (' + variables.counters
        + '): another chart build, or an edit by hand. To make exactly this change on purpose: '
        + variables.acceptSchema + ', then run it again'
    - expression: >-
        request.operation != 'UPDATE' || variables.schemaAccepted
        || !(variables.liveSchema != '' && variables.newSchema == '')
        && !(variables.liveDigest != '' && variables.newDigest == 'none')
      messageExpression: >-
        'upgrade-guard ({{ $owner }}): this UPDATE of the CRD ' + variables.crd
        + ' drops its upgrade-guard.io schema annotations (' + variables.counters
        + '): a CRD from a chart, or a revision of it, that does not adopt the guard. To make
        exactly this change on purpose: ' + variables.acceptSchema + ', then run it again'
    - expression: >-
        request.operation != 'UPDATE' || variables.stateAccepted || variables.liveState == ''
        || variables.newState != 'none' && (!variables.liveState.matches('^[0-9]+$')
        || !variables.newState.matches('^[0-9]+$') || int(variables.newState) >= int(variables.liveState))
      messageExpression: >-
        'upgrade-guard ({{ $owner }}): this UPDATE of the CRD ' + variables.crd
        + (variables.newState == 'none'
        ? ' drops its controller-state-version (' + variables.counters + '): nothing then says
        which state the controller this CRD goes with reads'
        : ' lowers its controller-state-version (' + variables.counters + '): the objects
        stored may hold state newer than the controller this CRD goes with reads')
        + '. To make exactly this change on purpose: ' + variables.acceptState + ', then run it
        again'
    - expression: >-
        request.operation != 'DELETE'
        || variables.live[?'upgrade-guard.io/accept-delete'].orValue('') == 'true'
      messageExpression: >-
        'upgrade-guard ({{ $owner }}): deleting the CRD ' + variables.crd
        + ' deletes every object stored in it (crd-schema-version '
        + (variables.liveSchema == '' ? 'none' : variables.liveSchema) + ', controller-state-version '
        + (variables.liveState == '' ? 'none' : variables.liveState) + '). To delete it on purpose: kubectl
        annotate crd ' + variables.crd + ' upgrade-guard.io/accept-delete=true, then delete it again'
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: {{ $name }}
  labels:
    app.kubernetes.io/name: upgrade-guard
    app.kubernetes.io/instance: {{ $root.Release.Name }}
  annotations:
    helm.sh/resource-policy: keep
    argocd.argoproj.io/sync-options: Prune=false,Delete=false
spec:
  policyName: {{ $name }}
  validationActions: [Deny]
{{- end -}}


{{- /* Helm's and Argo CD's hook annotations for one weight (Argo CD's sync wave). */ -}}
{{- define "upgrade-guard.annotations" -}}
{{ include "upgrade-guard.helm-hook" . }}
argocd.argoproj.io/hook: PreSync
argocd.argoproj.io/sync-wave: {{ . | quote }}
argocd.argoproj.io/hook-delete-policy: BeforeHookCreation
{{- end -}}

{{- define "upgrade-guard.helm-hook" -}}
helm.sh/hook: pre-install,pre-upgrade,pre-rollback
helm.sh/hook-weight: {{ . | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end -}}


{{- /* What the chart's own files say, as JSON: its counters (Chart.yaml annotations
upgrade-guard.io/NAME), the CRDs it lists (upgrade-guard.io/crds) and the names of those its
CRD templates (upgrade-guard.io/crd-templates, under templates/ or a subchart's) render with
these values.
Fails the render, with the fix, when the chart declares no controller-state version, names
no CRD template (or one that is not there or renders other kinds only) or renders a CRD it
does not list. */ -}}
{{- define "upgrade-guard.chart" -}}
{{- $annotations := .Chart.Annotations | default dict -}}
{{- $key := "upgrade-guard.io/" -}}
{{- $state := index $annotations (print $key "controller-state-version") -}}
{{- if not $state -}}
{{- fail (printf "upgrade-guard: %s's Chart.yaml declares no controller-state version: add the annotation %scontroller-state-version: \"N\", N the state version this release's controller reads and writes (as its image's entry in the image table says)" .Chart.Name $key) -}}
{{- end -}}
{{- $counters := dict -}}
{{- range $annotation, $value := $annotations -}}
{{- $counter := trimPrefix $key $annotation -}}
{{- if and (hasPrefix $key $annotation) (not (has $counter (list "crds" "crd-templates" "rbac-templates" "webhook-templates"))) -}}
{{- $_ := set $counters $counter $value -}}
{{- end -}}
{{- end -}}
{{- $listed := list -}}
{{- range splitList "," (index $annotations (print $key "crds")) -}}
{{- $crd := trim . -}}
{{- if and $crd (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?){2,}$" $crd)) -}}
{{- fail (printf "upgrade-guard: Chart.yaml's %scrds lists %q, not PLURAL.GROUP as the apiserver names a CRD" $key $crd) -}}
{{- end -}}
{{- if $crd }}{{ $listed = append $listed $crd }}{{ end -}}
{{- end -}}
{{- if not $listed -}}
{{- fail (printf "upgrade-guard: %s's Chart.yaml lists no CRDs: add the annotation %scrds: \"PLURAL.GROUP,...\", every CRD a release of this chart may apply (the hook may read these only)" .Chart.Name $key) -}}
{{- end -}}
{{- /* The CRD templates: at least one, or "none" for a release that applies no CRD on
       purpose (it dropped them all, and lists them so the hook sees Helm delete them). A
       template that renders nothing is a CRD switch turned off (cert-manager's
       crds.enabled=false): the library cannot tell it from one that never renders a CRD,
       since Helm shows a template neither its source nor the values that turn it on. */ -}}
{{- $crdTemplates := print $key "crd-templates" -}}
{{- $files := list -}}
{{- range splitList "," (index $annotations $crdTemplates | default "") -}}
{{- if trim . }}{{ $files = append $files (trim .) }}{{ end -}}
{{- end -}}
{{- if not $files -}}
{{- fail (printf "upgrade-guard: %s's Chart.yaml names no CRD templates: add the annotation %s: \"FILE,...\", the templates under templates/ that render the CRDs %scrds lists (a release that applies none of them on purpose, having dropped them all, says %s: none)" .Chart.Name $crdTemplates $key $crdTemplates) -}}
{{- end -}}
{{- if eq (join "," $files) "none" }}{{ $files = list }}{{ end -}}
{{- $rendered := list -}}
{{- range $file := $files -}}
{{- $others := list -}}
{{- $crds := list -}}
{{- /* split as Helm splits a rendered template (pkg/release/util SplitManifests), so "---# comment" after a trimmed action splits too */ -}}
{{- range regexSplit "(?:^|\\s*\n)---\\s*" (include "upgrade-guard.template" (dict "root" $ "annotation" $crdTemplates "file" $file "what" (printf "the CRDs %scrds lists" $key))) -1 -}}
{{- $document := fromYaml . -}}
{{- $kind := get $document "kind" | toString -}}
{{- if eq $kind "CustomResourceDefinition" -}}
{{- $crd := get (get $document "metadata" | default dict) "name" -}}
{{- if not (has $crd $listed) -}}
{{- fail (printf "upgrade-guard: %s renders the CRD %s, which Chart.yaml's %scrds does not list: add it there (the hook may read only the CRDs listed)" (include "upgrade-guard.shown" $file) $crd $key) -}}
{{- end -}}
{{- $crds = append $crds $crd -}}
{{- else if $kind -}}
{{- $others = append $others $kind -}}
{{- end -}}
{{- end -}}
{{- if and $others (not $crds) -}}
{{- fail (printf "upgrade-guard: %s, which Chart.yaml's %s names, renders %s and no CRD: name there only the templates that render the CRDs %scrds lists" (include "upgrade-guard.shown" $file) $crdTemplates ($others | uniq | join ", ") $key) -}}
{{- end -}}
{{- $rendered = concat $rendered $crds -}}
{{- end -}}
{{- /* The operator's ClusterRoles (upgrade-guard.io/rbac-templates) and webhook
configurations (upgrade-guard.io/webhook-templates) these values render, by resource: the
hook compares them with the live ones of the same names, hooks left out as Helm leaves
them out of the release. */ -}}
{{- $live := dict -}}
{{- $kinds := dict "ClusterRole" "clusterroles" "ValidatingWebhookConfiguration" "validatingwebhookconfigurations" "MutatingWebhookConfiguration" "mutatingwebhookconfigurations" -}}
{{- $rendering := dict "rbac-templates" "the operator's ClusterRoles and Roles" "webhook-templates" "its webhook configurations" -}}
{{- range $annotation := list "rbac-templates" "webhook-templates" -}}
{{- range splitList "," (index $annotations (print $key $annotation) | default "") -}}
{{- $file := trim . -}}
{{- if $file -}}
{{- range regexSplit "(?:^|\\s*\n)---\\s*" (include "upgrade-guard.template" (dict "root" $ "annotation" (print $key $annotation) "file" $file "what" (get $rendering $annotation))) -1 -}}
{{- $document := fromYaml . -}}
{{- $resource := get $kinds (get $document "kind" | toString) -}}
{{- $metadata := get $document "metadata" | default dict -}}
{{- if and $resource (not (hasKey (get $metadata "annotations" | default dict) "helm.sh/hook")) -}}
{{- $_ := set $live $resource (append (get $live $resource | default list) (get $metadata "name") | uniq | sortAlpha) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- dict "counters" $counters "crds" ($listed | uniq | sortAlpha) "rendered" ($rendered | uniq | sortAlpha) "live" $live | toJson -}}
{{- end -}}


{{- /* The chart's template FILE (named by Chart.yaml's ANNOTATION to render WHAT) rendered
as Helm renders it, with these values: a path under templates/, or charts/SUBCHART/templates/F,
the template F of the subchart SUBCHART (its name, or alias, among Chart.yaml's
dependencies), rendered in the subchart's scope (its .Values, .Chart and .Files: Helm's
.Subcharts). A subchart these values switch off (its condition, as crds.enabled=false) Helm
leaves out of the render, templates and dependency entry alike, so it renders nothing, as a
template switched off does: the chart's values table of its name, where the condition is, is
all that tells it from a subchart the chart does not have, which fails the render. Fails it
too, naming the annotation, when FILE is a partial or no template of the chart (or of an
enabled subchart): Helm's own include would fail in Go's words. A define whose body is only
whitespace takes effect only where no template of that name exists (Go's text/template), so
that template renders exactly this body when FILE names none. */ -}}
{{- define "upgrade-guard.template" -}}
{{- $root := .root -}}
{{- $shown := include "upgrade-guard.shown" .file -}}
{{- $scope := $root -}}
{{- $base := $root.Template.BasePath -}}
{{- $file := .file -}}
{{- $subchart := "" -}}
{{- if eq $shown .file -}}
{{- $subchart = index (splitList "/" .file) 1 -}}
{{- $file = trimPrefix (printf "charts/%s/templates/" $subchart) .file -}}
{{- $base = printf "%s/charts/%s/templates" (dir $root.Template.BasePath) $subchart -}}
{{- $scope = get $root.Subcharts $subchart -}}
{{- end -}}
{{- $absent := " \t \n \t " -}}
{{- if hasPrefix "_" (base $file) -}}
{{- fail (printf "upgrade-guard: Chart.yaml's %s names %s, a partial (Helm renders no manifest from it): name the templates that render %s" .annotation $shown .what) -}}
{{- end -}}
{{- if and $subchart (not $scope) (not (hasKey $root.Values $subchart)) -}}
{{- fail (printf "upgrade-guard: Chart.yaml's %s names %s, but %s has no subchart %s these values enable, nor a values table %s where a condition would switch it off: name a subchart's templates as charts/SUBCHART/templates/FILE, SUBCHART its name or alias among Chart.yaml's dependencies" .annotation $shown $root.Chart.Name $subchart $subchart) -}}
{{- end -}}
{{- if $scope -}}
{{- $path := printf "%s/%s" $base $file -}}
{{- $text := tpl (printf "{{ define %q }}%s{{ end }}{{ include %q . }}" $path $absent $path) (set (omit $scope "Template") "Template" (dict "Name" $path "BasePath" $base)) -}}
{{- if eq $text $absent -}}
{{- if $subchart -}}
{{- fail (printf "upgrade-guard: Chart.yaml's %s names %s, but %s's subchart %s has no template templates/%s: name the templates that render %s, a subchart's as charts/SUBCHART/templates/FILE" .annotation .file $root.Chart.Name $subchart $file .what) -}}
{{- end -}}
{{- fail (printf "upgrade-guard: Chart.yaml's %s names %s, but %s has no template templates/%s: name the templates that render %s, as paths from templates/ (templates/crds/foo.yaml as crds/foo.yaml), a subchart's as charts/SUBCHART/templates/FILE" .annotation .file $root.Chart.Name .file .what) -}}
{{- end -}}
{{- $text -}}
{{- end -}}
{{- end -}}


{{- /* FILE, as Chart.yaml's template lists name it, shown as a path in the chart:
charts/SUBCHART/templates/F is a subchart's template, any other path one under templates/. */ -}}
{{- define "upgrade-guard.shown" -}}
{{- if regexMatch "^charts/[^/]+/templates/." . }}{{ . }}{{ else }}templates/{{ . }}{{ end -}}
{{- end -}}
