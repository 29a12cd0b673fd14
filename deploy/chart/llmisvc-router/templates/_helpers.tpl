{{/*
Shared pieces of the templates. Object names are fixed (llmisvc-router-*), as in the kustomize install: the
ClusterRoles are cluster-wide and the docs, the CLI and the RBAC tests name these objects, so one release of
the chart per cluster.
*/}}

{{/* Labels on every object's metadata: kustomize's part-of label and Helm's standard ones. */}}
{{- define "llmisvc-router.labels" -}}
app.kubernetes.io/part-of: llmisvc-router
{{ include "llmisvc-router.helmLabels" . }}
{{- end }}

{{/* Helm's standard labels alone: the objects in KServe's namespace (deploy/kserve-config) carry no others. */}}
{{- define "llmisvc-router.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* The selector labels of a component's pods (the argument: worker or watcher). */}}
{{- define "llmisvc-router.selector" -}}
app.kubernetes.io/name: llmisvc-router
app.kubernetes.io/component: {{ . }}
{{- end }}

{{- define "llmisvc-router.image" -}}
{{- $tag := .tag | default .root.Values.image.tag | default .root.Chart.AppVersion -}}
image: {{ printf "%s:%s" .root.Values.image.repository $tag | quote }}
{{- with .root.Values.image.pullPolicy }}
imagePullPolicy: {{ . }}
{{- end }}
{{- end }}

{{/* envFrom of every container: the settings ConfigMap and the optional Temporal Secret. */}}
{{- define "llmisvc-router.envFrom" -}}
envFrom:
  - configMapRef:
      name: llmisvc-router-settings
  - secretRef:
      name: {{ .Values.temporal.secretName }}
      optional: true
{{- end }}

{{- define "llmisvc-router.podSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  {{- if .group }}
  runAsGroup: 65532
  {{- end }}
  seccompProfile:
    type: RuntimeDefault
{{- end }}

{{- define "llmisvc-router.containerSecurityContext" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: [ALL]
{{- end }}

{{/*
The pod template of a long-running component. Arguments: root (the chart's context), component (worker or
watcher), args (the command), values (the component's values), extraLabels and extraEnv (a build's).
*/}}
{{- define "llmisvc-router.podTemplate" -}}
{{- $root := .root -}}
{{- $v := .values -}}
metadata:
  labels:
    {{- include "llmisvc-router.selector" .component | nindent 4 }}
    {{- with .extraLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    # A changed setting restarts the pods (the processes read the settings at start).
    checksum/settings: {{ include (print $root.Template.BasePath "/settings.yaml") $root | sha256sum }}
    {{- with $v.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: llmisvc-router-{{ .component }}
  {{- include "llmisvc-router.podSecurityContext" (dict "group" true) | nindent 2 }}
  terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
  {{- with $root.Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if and (eq .component "watcher") $root.Values.temporal.registerSearchAttributes }}
  # Registers the workflows' search attributes in the Temporal namespace before the watcher starts, at
  # every rollout (idempotent): an init container and not a Job, whose immutable pod template a new image
  # could not be applied to. Off on Temporal Cloud, where tcld or the Cloud UI adds them.
  initContainers:
    - name: register-search-attributes
      {{- include "llmisvc-router.image" (dict "root" $root "tag" .tag) | nindent 6 }}
      args: ["register-search-attributes"]
      {{- include "llmisvc-router.envFrom" $root | nindent 6 }}
      resources:
        {{- toYaml $root.Values.registration.resources | nindent 8 }}
      {{- include "llmisvc-router.containerSecurityContext" . | nindent 6 }}
  {{- end }}
  containers:
    - name: {{ .component }}
      {{- include "llmisvc-router.image" (dict "root" $root "tag" .tag) | nindent 6 }}
      args: {{ toJson .args }}
      {{- include "llmisvc-router.envFrom" $root | nindent 6 }}
      # The codec's entries come first, where the payload-encryption component's patch puts them.
      env:
        {{- if $root.Values.payloadEncryption.enabled }}
        - name: LLMISVC_ROUTER_CODEC_KEYS_FILE
          value: /etc/llmisvc-router/codec/keys.json
        {{- end }}
        - name: LLMISVC_ROUTER_METRICS_PORT
          value: {{ $root.Values.metrics.port | quote }}
        - name: LLMISVC_ROUTER_PROBE_PORT
          value: {{ $root.Values.probes.port | quote }}
        {{- with .extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - name: metrics
          containerPort: {{ $root.Values.metrics.port }}
        - name: probes
          containerPort: {{ $root.Values.probes.port }}
      livenessProbe:
        httpGet:
          path: /healthz
          port: probes
        {{- toYaml $root.Values.probes.liveness | nindent 8 }}
      readinessProbe:
        httpGet:
          path: /readyz
          port: probes
        {{- toYaml $root.Values.probes.readiness | nindent 8 }}
      resources:
        {{- toYaml $v.resources | nindent 8 }}
      {{- include "llmisvc-router.containerSecurityContext" . | nindent 6 }}
      volumeMounts:
        {{- if $root.Values.payloadEncryption.enabled }}
        - name: codec-keys
          mountPath: /etc/llmisvc-router/codec
          readOnly: true
        {{- end }}
        - name: tmp
          mountPath: /tmp
  volumes:
    {{- if $root.Values.payloadEncryption.enabled }}
    - name: codec-keys
      secret:
        secretName: {{ $root.Values.payloadEncryption.secretName }}
    {{- end }}
    - name: tmp
      emptyDir: {}
  {{- with $v.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
