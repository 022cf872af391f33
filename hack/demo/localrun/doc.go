// Package localrun runs one container of a pod spec the operator rendered
// as a local process, for a control plane that has no nodes (make demo):
// the container's args and environment as written (values, Secret and
// ConfigMap keys, and the downward API's fields and resources of the pod
// the controller would create), its ConfigMap, Secret and emptyDir volumes
// materialised into a local folder, and the mount paths in the args and in
// the mounted config files mapped to that folder. Anything it cannot
// reproduce locally (another volume kind, a field the downward API does
// not give) is an error that names it, never silently skipped.
package localrun
