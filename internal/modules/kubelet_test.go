package modules

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kubeletoptions "k8s.io/kubernetes/cmd/kubelet/app/options"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"

	edgedconfig "github.com/kubeedge/kubeedge/edge/pkg/edged/config"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

// The Windows settings must survive upstream's conversion into the flags and
// configuration the embedded kubelet runs with: a priority class that never
// arrives makes the Windows kubelet panic.
func TestWindowsSettingsReachTheKubelet(t *testing.T) {
	p := filepath.Join(testdir.New(t, "modules-"), "edgecore.yaml")
	yaml := "apiVersion: edgecore.config.kubeedge.io/v1alpha2\nkind: EdgeCore\nmodules:\n  edged:\n" +
		"    windowsPriorityClass: ABOVE_NORMAL_PRIORITY_CLASS\n"
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, err := config.Load(p, config.Host{GOOS: config.Windows, Hostname: "LINE3-PC", NodeIP: "10.0.0.5"})
	if err != nil {
		t.Fatal(err)
	}

	var flags kubeletoptions.KubeletFlags
	edgedconfig.ConvertConfigEdgedFlagToConfigKubeletFlag(&c.Modules.Edged.TailoredKubeletFlag, &flags)
	if flags.WindowsPriorityClass != "ABOVE_NORMAL_PRIORITY_CLASS" {
		t.Errorf("kubelet flag windowsPriorityClass = %q", flags.WindowsPriorityClass)
	}
	if flags.WindowsService {
		t.Error("the kubelet would try to install itself as a service")
	}
	if flags.HostnameOverride != "line3-pc" || flags.PodSandboxImage != config.WindowsSandboxImage {
		t.Errorf("kubelet flags: node %q sandbox %q", flags.HostnameOverride, flags.PodSandboxImage)
	}

	var kc kubeletconfig.KubeletConfiguration
	if err := edgedconfig.ConvertEdgedKubeletConfigurationToConfigKubeletConfiguration(c.Modules.Edged.TailoredKubeletConfig, &kc, nil); err != nil {
		t.Fatal(err)
	}
	if kc.CgroupsPerQOS || kc.CPUCFSQuota || len(kc.EnforceNodeAllocatable) != 0 || kc.ResolverConfig != "" || kc.CgroupDriver != "" {
		t.Errorf("kubelet configuration keeps Linux settings: cgroupsPerQOS=%v cpuCFSQuota=%v enforceNodeAllocatable=%v resolvConf=%q cgroupDriver=%q",
			kc.CgroupsPerQOS, kc.CPUCFSQuota, kc.EnforceNodeAllocatable, kc.ResolverConfig, kc.CgroupDriver)
	}
	if kc.ContainerRuntimeEndpoint != "npipe://./pipe/containerd-containerd" {
		t.Errorf("CRI endpoint %q", kc.ContainerRuntimeEndpoint)
	}
}

// A node moved from KubeEdge v1.20 keeps its running containers only if
// the kubelet (patches/0009) recognises the hash that Kubernetes 1.30's
// kubelet wrote on them. 0x3c42280f is the hash 1.30 gives this container
// (its own TestHashContainer records it); 1.31 and later hash differently.
func TestKubeletRecognisesAContainerHashedBefore131(t *testing.T) {
	c := corev1.Container{
		Name:  "test_container",
		Image: "foo/image:v1",
		Args:  []string{"/bin/sh", "-c", "echo abc"},
		Ports: []corev1.ContainerPort{{ContainerPort: 8001}},
	}
	if got := kubecontainer.HashContainerBefore131(&c); got != 0x3c42280f {
		t.Errorf("hash as Kubernetes 1.30 wrote it: %#x, want 0x3c42280f", got)
	}
	if kubecontainer.HashContainer(&c) == 0x3c42280f {
		t.Error("today's hash equals 1.30's: the fallback would never be needed; is the patch still right?")
	}
}
