package servicestore

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The group, version and resource of what the store holds, as metamanager
// keys them.
var (
	ServicesResource       = v1.SchemeGroupVersion.WithResource("services")
	EndpointSlicesResource = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
)

// KindOf says which kind gvk is, or false for one the store does not
// hold (discovery.k8s.io/v1beta1 slices included: the cloud sends v1).
func KindOf(gvk schema.GroupVersionKind) (Kind, bool) {
	switch gvk {
	case v1.SchemeGroupVersion.WithKind("Service"):
		return KindService, true
	case discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"):
		return KindEndpointSlice, true
	}
	return 0, false
}

// lastApplied is the annotation kubectl apply leaves: a copy of the whole
// object the node never reads.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Decode turns an object as metamanager holds it (JSON with apiVersion and
// kind) into a typed Service or EndpointSlice, trimmed of what no reader
// of the store needs (managed fields, kubectl's last applied copy).
func Decode(data []byte) (runtime.Object, error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(data, &tm); err != nil {
		return nil, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", tm.APIVersion, err)
	}
	kind, ok := KindOf(gv.WithKind(tm.Kind))
	if !ok {
		return nil, fmt.Errorf("%s %s is neither a v1 Service nor a discovery.k8s.io/v1 EndpointSlice", tm.APIVersion, tm.Kind)
	}
	var obj runtime.Object
	if kind == KindService {
		obj = &v1.Service{}
	} else {
		obj = &discoveryv1.EndpointSlice{}
	}
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	trim(obj)
	return obj, nil
}

// FromUnstructured is Decode of an object metamanager's watch hook hands
// over.
func FromUnstructured(u *unstructured.Unstructured) (runtime.Object, error) {
	kind, ok := KindOf(u.GroupVersionKind())
	if !ok {
		return nil, fmt.Errorf("%s is neither a v1 Service nor a discovery.k8s.io/v1 EndpointSlice", u.GroupVersionKind())
	}
	var obj runtime.Object
	if kind == KindService {
		obj = &v1.Service{}
	} else {
		obj = &discoveryv1.EndpointSlice{}
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), obj); err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	trim(obj)
	return obj, nil
}

func trim(obj runtime.Object) {
	var m *map[string]string
	switch o := obj.(type) {
	case *v1.Service:
		o.ManagedFields = nil
		m = &o.Annotations
	case *discoveryv1.EndpointSlice:
		o.ManagedFields = nil
		m = &o.Annotations
	}
	if m != nil && *m != nil {
		delete(*m, lastApplied)
		if len(*m) == 0 {
			*m = nil
		}
	}
}
