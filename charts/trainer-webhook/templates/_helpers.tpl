{{/*
The chart's name (app.kubernetes.io/name), and the name of every object:
fullnameOverride, else the release's name (with the chart's appended unless
it holds it already). Truncated to 52 characters so that the longest derived
name, <fullname>-selfsigned, stays within Kubernetes' 63.
*/}}
{{- define "trainer-webhook.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "trainer-webhook.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The namespace of every namespaced object. */}}
{{- define "trainer-webhook.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride }}
{{- end }}

{{/*
Labels of every object: app.kubernetes.io/name as deploy/ sets it, and
Helm's own (tests/integration/test_deploy_chart.c compares the rest with
kustomize's render).
*/}}
{{- define "trainer-webhook.labels" -}}
app.kubernetes.io/name: {{ include "trainer-webhook.name" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* The pods' labels, which every selector matches. */}}
{{- define "trainer-webhook.selectorLabels" -}}
app.kubernetes.io/name: {{ include "trainer-webhook.name" . }}
app.kubernetes.io/component: webhook
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The image: repository, then @digest or :tag (default: the appVersion). */}}
{{- define "trainer-webhook.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Whether the server manages its own certificates (else cert-manager's). */}}
{{- define "trainer-webhook.managed" -}}
{{- if eq .Values.certificates.mode "managed" }}true{{ end }}
{{- end }}
