{{/* Chart name, truncated to the DNS label limit. */}}
{{- define "vigil.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name. */}}
{{- define "vigil.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "vigil.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "vigil.labels" -}}
helm.sh/chart: {{ include "vigil.chart" . }}
{{ include "vigil.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "vigil.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vigil.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: bot
{{- end }}

{{- define "vigil.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "vigil.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding the VIGIL_* secret environment. */}}
{{- define "vigil.secretName" -}}
{{- default (include "vigil.fullname" .) .Values.existingSecret }}
{{- end }}

{{/* In-chart Redis names and labels. */}}
{{- define "vigil.redis.fullname" -}}
{{- printf "%s-redis" (include "vigil.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "vigil.redis.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vigil.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: redis
{{- end }}

{{/*
The Redis address vigil uses: the in-chart Redis when enabled, else
redis.addrs (Cluster nodes or Sentinels, comma-joined here only to test
that one is set), else redis.addr, else "" (in-memory store, single
replica only).
*/}}
{{- define "vigil.redisAddr" -}}
{{- if .Values.redis.enabled }}
{{- printf "%s:6379" (include "vigil.redis.fullname" .) }}
{{- else if .Values.redis.addrs }}
{{- join "," .Values.redis.addrs }}
{{- else }}
{{- .Values.redis.addr }}
{{- end }}
{{- end }}

{{/*
vigil.yaml: the user's config with the chart's server and store settings
laid over it. The Redis password is not here; it comes from the Secret.
*/}}
{{- define "vigil.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) }}
{{- $addr := include "vigil.redisAddr" . }}
{{- $store := dict "backend" "memory" }}
{{- if $addr }}
{{- $redis := dict "db" (int .Values.redis.db) "tls" .Values.redis.tls "key_prefix" .Values.redis.keyPrefix }}
{{- if and (not .Values.redis.enabled) .Values.redis.addrs }}
{{- $_ := set $redis "addrs" .Values.redis.addrs }}
{{- with .Values.redis.masterName }}{{ $_ := set $redis "master_name" . }}{{ end }}
{{- else }}
{{- $_ := set $redis "addr" $addr }}
{{- end }}
{{- $store = dict "backend" "redis" "redis" $redis }}
{{- end }}
{{- $_ := mergeOverwrite $cfg (dict "server" (dict "listen" (printf ":%d" (int .Values.server.port))) "store" $store) }}
{{- toYaml $cfg }}
{{- end }}

{{/*
Where vigil and the in-chart Redis find the Redis password, as a
secretKeyRef body: redis.auth.existingSecret, else the top-level
existingSecret or the chart's Secret under VIGIL_STORE_REDIS_PASSWORD.
*/}}
{{- define "vigil.redisPasswordRef" -}}
{{- if .Values.redis.auth.existingSecret -}}
name: {{ .Values.redis.auth.existingSecret }}
key: {{ .Values.redis.auth.existingSecretKey }}
{{- else -}}
name: {{ include "vigil.secretName" . }}
key: VIGIL_STORE_REDIS_PASSWORD
{{- end }}
{{- end }}

{{/*
The Redis password the chart's Secret holds: redis.auth.password, else the
one an earlier install generated (kept across upgrades), else a new one.
*/}}
{{- define "vigil.redisPassword" -}}
{{- if .Values.redis.auth.password }}
{{- .Values.redis.auth.password }}
{{- else }}
{{- $old := lookup "v1" "Secret" .Release.Namespace (include "vigil.fullname" .) }}
{{- if and $old $old.data (index $old.data "VIGIL_STORE_REDIS_PASSWORD") }}
{{- index $old.data "VIGIL_STORE_REDIS_PASSWORD" | b64dec }}
{{- else }}
{{- randAlphaNum 32 }}
{{- end }}
{{- end }}
{{- end }}

{{/* Whether the chart's Secret carries the Redis password. */}}
{{- define "vigil.redisPasswordInSecret" -}}
{{- if and (include "vigil.redisAddr" .) .Values.redis.auth.enabled (not .Values.redis.auth.existingSecret) (not .Values.existingSecret) }}true{{ end }}
{{- end }}

{{/* Fail early on settings that cannot work. */}}
{{- define "vigil.validate" -}}
{{- if hasKey .Values.redis "password" }}
{{- fail "redis.password has moved to redis.auth.password" }}
{{- end }}
{{- if and (gt (int .Values.replicaCount) 1) (not (include "vigil.redisAddr" .)) }}
{{- fail "replicaCount > 1 needs Redis: set redis.enabled=true or redis.addr (or replicaCount=1 for the in-memory store)" }}
{{- end }}
{{- if and .Values.redis.enabled .Values.redis.addrs }}
{{- fail "redis.addrs names an external Cluster or Sentinels; it cannot be used with the in-chart Redis (redis.enabled)" }}
{{- end }}
{{- if and .Values.redis.masterName (not .Values.redis.addrs) }}
{{- fail "redis.masterName needs redis.addrs: the Sentinels' host:port" }}
{{- end }}
{{- if and .Values.redis.enabled .Values.redis.tls }}
{{- fail "redis.tls is not supported with the in-chart Redis (redis.enabled); use an external Redis" }}
{{- end }}
{{- end }}
