package config

import (
	"reflect"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fieldsNaming lists the fields, anywhere below t, whose name contains
// word (the protobuf messages' Go structs, through pointers, slices and
// maps).
func fieldsNaming(t reflect.Type, word string, path string, seen map[reflect.Type]bool) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return nil
	}
	seen[t] = true
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		p := path + "." + f.Name
		if strings.Contains(strings.ToLower(f.Name), word) {
			out = append(out, p)
		}
		out = append(out, fieldsNaming(f.Type, word, p, seen)...)
	}
	return out
}

// TestSandboxImageNeverReachesTheRuntime proves why podSandboxImage is not
// refused at load (validate.go): what the kubelet sends to start a pod's
// sandbox names no image, so the runtime (containerd, with the image its
// config.toml pins) picks it, whatever the configuration says. The check
// fails the day the CRI gives the kubelet a way to pass one.
func TestSandboxImageNeverReachesTheRuntime(t *testing.T) {
	if got := fieldsNaming(reflect.TypeOf(runtimeapi.RunPodSandboxRequest{}), "image", "RunPodSandboxRequest", map[reflect.Type]bool{}); len(got) > 0 {
		t.Fatalf("the CRI's RunPodSandbox request now carries an image (%v): the kubelet's podSandboxImage may reach the runtime, and validate.go's decision must be made again", got)
	}
	// The control: the walk finds an image where the CRI has one.
	if got := fieldsNaming(reflect.TypeOf(runtimeapi.CreateContainerRequest{}), "image", "CreateContainerRequest", map[reflect.Type]bool{}); len(got) == 0 {
		t.Fatal("the walk finds no image field in CreateContainerRequest, which has one: it proves nothing")
	}

	// So upstream's Windows default, which every node keadm joined has,
	// loads; join refuses it only where it pins it in containerd's
	// configuration (internal/runtimeinstall).
	host := Host{GOOS: Windows, Hostname: "WIN-EDGE-1", SystemDrive: "C:", ProgramFiles: `C:\Program Files`}
	raw := header + "modules:\n  edged:\n    hostnameOverride: win-edge-1\n    podSandboxImage: kubeedge/pause:3.6\n"
	c, _, err := LoadBytes([]byte(raw), "test", host)
	if err != nil {
		t.Fatalf("a configuration with keadm's pause image does not load: %v", err)
	}
	if c.Modules.Edged.PodSandboxImage != "kubeedge/pause:3.6" {
		t.Errorf("podSandboxImage = %q, want it kept", c.Modules.Edged.PodSandboxImage)
	}
	for img, want := range map[string]bool{"kubeedge/pause:3.6": true, "docker.io/kubeedge/pause:3.6": true, "kubeedge/pause": true,
		WindowsSandboxImage: false, "mcr.microsoft.com/oss/kubernetes/pause:3.9": false, "registry.example/kubeedge/pause:3.6": false} {
		if got := LinuxOnlySandboxImage(img); got != want {
			t.Errorf("LinuxOnlySandboxImage(%q) = %v, want %v", img, got, want)
		}
	}
}
