package memlimit

import (
	"math"
	"runtime/debug"
	"testing"
)

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
)

func setting(t *testing.T, v string) Setting {
	t.Helper()
	var s Setting
	if err := s.Set(v); err != nil {
		t.Fatalf("Set(%q): %v", v, err)
	}
	return s
}

func TestDecide(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	current := debug.SetMemoryLimit(-1)
	cases := []struct {
		name   string
		in     Inputs
		limit  int64
		source Source
		apply  bool
	}{
		{"flag size wins over everything", Inputs{Flag: setting(t, "300Mi"), Env: env(map[string]string{"GOMEMLIMIT": "1GiB"}),
			KubeReserved: map[string]string{"memory": "200Mi"}, HostMemory: uint64(8 * gi)}, 300 * mi, FromFlag, true},
		{"flag off lifts the limit", Inputs{Flag: setting(t, "off"), Env: env(map[string]string{"GOMEMLIMIT": "1GiB"}), HostMemory: uint64(8 * gi)},
			math.MaxInt64, FromFlag, true},
		{"GOMEMLIMIT is left to the runtime", Inputs{Env: env(map[string]string{"GOMEMLIMIT": "1GiB"}),
			KubeReserved: map[string]string{"memory": "200Mi"}, HostMemory: uint64(8 * gi)}, current, FromEnvironment, false},
		{"kubeReserved memory", Inputs{Env: env(nil), KubeReserved: map[string]string{"cpu": "100m", "memory": "512Mi"}, HostMemory: uint64(8 * gi)},
			512 * mi, FromKubeReserved, true},
		{"a sixteenth of an 8 GiB host", Inputs{Env: env(nil), KubeReserved: map[string]string{"cpu": "100m"}, HostMemory: uint64(8 * gi)},
			512 * mi, FromHost, true},
		{"at least 128 MiB on a small host", Inputs{Env: env(nil), HostMemory: uint64(1 * gi)}, 128 * mi, FromHost, true},
		{"at most 1 GiB on a large host", Inputs{Env: env(nil), HostMemory: uint64(64 * gi)}, gi, FromHost, true},
		{"unknown host memory", Inputs{Env: env(nil)}, math.MaxInt64, None, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Decide(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if p.Limit != c.limit || p.Source != c.source || p.Apply != c.apply {
				t.Errorf("got limit %d from %s (apply %v), want %d from %s (apply %v)", p.Limit, p.Source, p.Apply, c.limit, c.source, c.apply)
			}
		})
	}
}

func TestDecideRefusesABadKubeReserved(t *testing.T) {
	_, err := Decide(Inputs{KubeReserved: map[string]string{"memory": "lots"}, HostMemory: uint64(gi)})
	if err == nil {
		t.Fatal("kubeReserved memory \"lots\" was accepted")
	}
}

func TestSetting(t *testing.T) {
	for _, v := range []string{"off", "OFF", "300Mi", "1Gi", "268435456"} {
		s := setting(t, v)
		if v == "268435456" && s.String() != "256Mi" {
			t.Errorf("Set(%q).String() = %q", v, s.String())
		}
	}
	for _, v := range []string{"", "lots", "-1Gi", "16Mi"} {
		var s Setting
		if err := s.Set(v); err == nil {
			t.Errorf("Set(%q) was accepted", v)
		}
	}
	var unset Setting
	if unset.String() != "" {
		t.Errorf("unset setting prints %q", unset.String())
	}
}

func TestPolicyString(t *testing.T) {
	if got := (Policy{Limit: 256 * mi, Source: FromHost}).String(); got != "soft memory limit 256Mi (host memory)" {
		t.Errorf("got %q", got)
	}
	if got := (Policy{Limit: math.MaxInt64, Source: FromFlag, GOGC: "50 (GOGC)"}).String(); got != "no soft memory limit (--memory-limit), GC percent 50 (GOGC)" {
		t.Errorf("got %q", got)
	}
}
