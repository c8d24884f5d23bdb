package config

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	tailoredkubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

func windowsSample(t *testing.T) *v1alpha2.EdgeCoreConfig {
	t.Helper()
	c, err := Sample(KindDefault, testHost(Windows))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// join and `config` write graceful node shutdown on for Windows, with the
// gate the 1.32 kubelet needs there; Linux keeps upstream's defaults.
func TestWindowsSamplesTurnGracefulNodeShutdownOn(t *testing.T) {
	c := windowsSample(t)
	k := c.Modules.Edged.TailoredKubeletConfig
	if k.ShutdownGracePeriod.Duration != 30*time.Second || k.ShutdownGracePeriodCriticalPods.Duration != 10*time.Second {
		t.Errorf("shutdownGracePeriod %v, shutdownGracePeriodCriticalPods %v; want 30s and 10s", k.ShutdownGracePeriod, k.ShutdownGracePeriodCriticalPods)
	}
	if !k.FeatureGates[GateWindowsGracefulNodeShutdown] {
		t.Errorf("featureGates %v lack %s: true", k.FeatureGates, GateWindowsGracefulNodeShutdown)
	}
	if ns := NodeShutdownOf(c, Windows); ns.Grace != 30*time.Second || ns.Field != "modules.edged.tailoredKubeletConfig.shutdownGracePeriod" {
		t.Errorf("NodeShutdownOf the Windows default = %+v, want 30s from shutdownGracePeriod", ns)
	}
	if errs := validateAll(c, Windows); len(errs) > 0 {
		t.Errorf("the Windows default is refused: %v", errs)
	}
	j, _, err := JoinConfig(JoinOptions{CloudCoreIPPort: "192.168.1.10:10000", Token: testToken}, testHost(Windows), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ns := NodeShutdownOf(j, Windows); ns.Grace != 30*time.Second {
		t.Errorf("join's configuration stops pods for %v at a host shutdown, want 30s", ns.Grace)
	}

	l, err := Sample(KindDefault, testHost("linux"))
	if err != nil {
		t.Fatal(err)
	}
	lk := l.Modules.Edged.TailoredKubeletConfig
	if lk.ShutdownGracePeriod.Duration != 0 || lk.FeatureGates[GateWindowsGracefulNodeShutdown] {
		t.Errorf("the Linux default changed: shutdownGracePeriod %v, featureGates %v", lk.ShutdownGracePeriod, lk.FeatureGates)
	}
}

// A configuration that turned the gate off, or already had gates of its
// own, keeps them: the default only adds the Windows gate.
func TestParseKeepsTheFilesFeatureGates(t *testing.T) {
	text := "apiVersion: edgecore.config.kubeedge.io/v1alpha2\nkind: EdgeCore\nmodules:\n  edged:\n    tailoredKubeletConfig:\n" +
		"      shutdownGracePeriod: 0s\n      shutdownGracePeriodCriticalPods: 0s\n      featureGates:\n        PodAndContainerStatsFromCRI: true\n"
	c, err := Parse([]byte(text), testHost(Windows))
	if err != nil {
		t.Fatal(err)
	}
	gates := c.Modules.Edged.TailoredKubeletConfig.FeatureGates
	if !gates["PodAndContainerStatsFromCRI"] || !gates[GateWindowsGracefulNodeShutdown] {
		t.Errorf("featureGates %v, want the file's and the Windows default", gates)
	}
	if ns := NodeShutdownOf(c, Windows); ns.Grace != 0 {
		t.Errorf("shutdownGracePeriod 0s stops pods for %v at a host shutdown, want none", ns.Grace)
	}
}

// NodeShutdownOf reads the configuration as the kubelet does.
func TestNodeShutdownOf(t *testing.T) {
	const byPriority = "modules.edged.tailoredKubeletConfig.shutdownGracePeriodByPodPriority"
	for _, tc := range []struct {
		name      string
		goos      string
		set       func(k *v1alpha2.TailoredKubeletConfiguration)
		want      time.Duration
		wantField string
	}{
		{"Windows default", Windows, func(*v1alpha2.TailoredKubeletConfiguration) {}, 30 * time.Second, "modules.edged.tailoredKubeletConfig.shutdownGracePeriod"},
		{"gate off", Windows, func(k *v1alpha2.TailoredKubeletConfiguration) {
			k.FeatureGates = map[string]bool{GateWindowsGracefulNodeShutdown: false}
		}, 0, ""},
		{"no grace period", Windows, func(k *v1alpha2.TailoredKubeletConfiguration) {
			k.ShutdownGracePeriod, k.ShutdownGracePeriodCriticalPods = metav1.Duration{}, metav1.Duration{}
		}, 0, ""},
		{"critical pods' part over the whole: the kubelet stops none", Windows, func(k *v1alpha2.TailoredKubeletConfiguration) {
			k.ShutdownGracePeriodCriticalPods = metav1.Duration{Duration: time.Minute}
		}, 0, ""},
		{"by priority, summed", Windows, func(k *v1alpha2.TailoredKubeletConfiguration) {
			k.ShutdownGracePeriod, k.ShutdownGracePeriodCriticalPods = metav1.Duration{}, metav1.Duration{}
			k.ShutdownGracePeriodByPodPriority = []tailoredkubeletconfigv1beta1.ShutdownGracePeriodByPodPriority{
				{Priority: 0, ShutdownGracePeriodSeconds: 20}, {Priority: 100000, ShutdownGracePeriodSeconds: 8}, {Priority: 2000000000, ShutdownGracePeriodSeconds: 5},
			}
		}, 33 * time.Second, byPriority},
		{"by priority with that gate off: shutdownGracePeriod", Windows, func(k *v1alpha2.TailoredKubeletConfiguration) {
			k.FeatureGates["GracefulNodeShutdownBasedOnPodPriority"] = false
			k.ShutdownGracePeriodByPodPriority = []tailoredkubeletconfigv1beta1.ShutdownGracePeriodByPodPriority{{Priority: 0, ShutdownGracePeriodSeconds: 90}}
		}, 30 * time.Second, "modules.edged.tailoredKubeletConfig.shutdownGracePeriod"},
		{"Linux's gate is on by default", "linux", func(k *v1alpha2.TailoredKubeletConfiguration) {
			k.FeatureGates = nil
		}, 30 * time.Second, "modules.edged.tailoredKubeletConfig.shutdownGracePeriod"},
		{"an unknown gate: the kubelet does not start", Windows, func(k *v1alpha2.TailoredKubeletConfiguration) {
			k.FeatureGates["NoSuchGate"] = true
		}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := windowsSample(t)
			tc.set(c.Modules.Edged.TailoredKubeletConfig)
			ns := NodeShutdownOf(c, tc.goos)
			if ns.Grace != tc.want || ns.Field != tc.wantField {
				t.Errorf("NodeShutdownOf = %+v, want %v from %q", ns, tc.want, tc.wantField)
			}
		})
	}
	c := windowsSample(t)
	c.Modules.Edged.Enable = false
	if ns := NodeShutdownOf(c, Windows); ns.Grace != 0 {
		t.Errorf("with edged off NodeShutdownOf = %+v, want none", ns)
	}
}

// Grace periods the Windows kubelet would ignore without a word are
// refused, naming the field, the value and the fix.
func TestValidateRefusesIgnoredGracePeriods(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(k *v1alpha2.TailoredKubeletConfiguration)
		want []string
	}{
		{"gate off", func(k *v1alpha2.TailoredKubeletConfiguration) { k.FeatureGates = map[string]bool{} },
			[]string{"modules.edged.tailoredKubeletConfig.shutdownGracePeriod", `"30s"`, "only with the feature gate WindowsGracefulNodeShutdown",
				"set modules.edged.tailoredKubeletConfig.featureGates.WindowsGracefulNodeShutdown: true", "or shutdownGracePeriod: 0s"}},
		{"gate off, by priority", func(k *v1alpha2.TailoredKubeletConfiguration) {
			k.FeatureGates[GateWindowsGracefulNodeShutdown] = false
			k.ShutdownGracePeriod, k.ShutdownGracePeriodCriticalPods = metav1.Duration{}, metav1.Duration{}
			k.ShutdownGracePeriodByPodPriority = []tailoredkubeletconfigv1beta1.ShutdownGracePeriodByPodPriority{{Priority: 0, ShutdownGracePeriodSeconds: 20}}
		}, []string{"shutdownGracePeriodByPodPriority", "1 entries", "WindowsGracefulNodeShutdown"}},
		{"critical pods' part over the whole", func(k *v1alpha2.TailoredKubeletConfiguration) {
			k.ShutdownGracePeriodCriticalPods = metav1.Duration{Duration: 45 * time.Second}
		}, []string{"shutdownGracePeriodCriticalPods", `"45s"`, "between 0s and shutdownGracePeriod (30s)", "lower it"}},
		{"both ways", func(k *v1alpha2.TailoredKubeletConfiguration) {
			k.ShutdownGracePeriodByPodPriority = []tailoredkubeletconfigv1beta1.ShutdownGracePeriodByPodPriority{{Priority: 0, ShutdownGracePeriodSeconds: 20}}
		}, []string{"shutdownGracePeriodByPodPriority", "cannot be used together with shutdownGracePeriod", "set both of those to 0s"}},
		{"negative", func(k *v1alpha2.TailoredKubeletConfiguration) {
			k.ShutdownGracePeriod = metav1.Duration{Duration: -time.Second}
			k.ShutdownGracePeriodCriticalPods = metav1.Duration{}
		}, []string{"shutdownGracePeriod", `"-1s"`, "must not be negative"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := windowsSample(t)
			tc.set(c.Modules.Edged.TailoredKubeletConfig)
			errs := validateAll(c, Windows)
			if len(errs) != 1 {
				t.Fatalf("%d errors, want 1: %v", len(errs), errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs[0].Error(), w) {
					t.Errorf("error %q lacks %q", errs[0], w)
				}
			}
		})
	}
	c := windowsSample(t)
	k := c.Modules.Edged.TailoredKubeletConfig
	k.FeatureGates = nil
	k.ShutdownGracePeriod, k.ShutdownGracePeriodCriticalPods = metav1.Duration{}, metav1.Duration{}
	if errs := validateAll(c, Windows); len(errs) > 0 {
		t.Errorf("graceful node shutdown off without the gate is refused: %v", errs)
	}
}
