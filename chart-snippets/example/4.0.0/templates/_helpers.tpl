{{- define "example-operator.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}
