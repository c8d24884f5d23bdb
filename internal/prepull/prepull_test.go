package prepull

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeRuntime records each pull; an image in fails fails that many times
// (-1: always).
type fakeRuntime struct {
	fails map[string]int
	pulls []string
	auths map[string]*runtimeapi.AuthConfig
}

func (f *fakeRuntime) PullImage(_ context.Context, image string, auth *runtimeapi.AuthConfig, _ *runtimeapi.PodSandboxConfig) error {
	f.pulls = append(f.pulls, image)
	if f.auths == nil {
		f.auths = map[string]*runtimeapi.AuthConfig{}
	}
	f.auths[image] = auth
	if n := f.fails[image]; n != 0 {
		if n > 0 {
			f.fails[image] = n - 1
		}
		return errors.New("rpc error: code = NotFound desc = " + image + " not found")
	}
	return nil
}

func TestEachImageHasItsStatusAndOnlyFailedOnesAreRetried(t *testing.T) {
	rt := &fakeRuntime{fails: map[string]int{"example.com/flaky:1": 1, "example.com/missing:1": -1}}
	got, all := Pull(context.Background(), rt, Job{Images: []string{"example.com/app:1", "example.com/flaky:1", "example.com/missing:1"}, Retries: 2})
	if all {
		t.Fatal("reported all pulled")
	}
	want := []struct{ image, status string }{{"example.com/app:1", "True"}, {"example.com/flaky:1", "True"}, {"example.com/missing:1", "False"}}
	for i, w := range want {
		if got[i].Image != w.image || string(got[i].Status) != w.status {
			t.Fatalf("status %d: %+v, want %v", i, got[i], w)
		}
	}
	if got[2].Reason != "pull failed after 3 tries: rpc error: code = NotFound desc = example.com/missing:1 not found" {
		t.Fatalf("reason %q", got[2].Reason)
	}
	// app once, flaky twice, missing three times.
	if len(rt.pulls) != 6 {
		t.Fatalf("pulls %v", rt.pulls)
	}
}

func TestThePullSecretsCredentialsGoToTheirRegistryOnly(t *testing.T) {
	auth := base64.StdEncoding.EncodeToString([]byte("robot:s3cret"))
	ring, err := NewKeyring([]byte(`{"auths":{"registry.example.com:5000":{"auth":"` + auth + `"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	rt := &fakeRuntime{}
	_, all := Pull(context.Background(), rt, Job{Images: []string{"registry.example.com:5000/line/app:2", "mcr.microsoft.com/windows/nanoserver:ltsc2022"}, Keyring: ring})
	if !all {
		t.Fatal("not all pulled")
	}
	if a := rt.auths["registry.example.com:5000/line/app:2"]; a == nil || a.Username != "robot" || a.Password != "s3cret" {
		t.Fatalf("the private image was pulled with %+v", a)
	}
	if a := rt.auths["mcr.microsoft.com/windows/nanoserver:ltsc2022"]; a != nil {
		t.Fatalf("another registry got the credentials: %+v", a)
	}
}

func TestABrokenPullSecretSaysHowToMakeOne(t *testing.T) {
	if _, err := NewKeyring([]byte("user:pass")); err == nil {
		t.Fatal("accepted")
	}
}

// leakyRuntime fails with a message that repeats the credentials it was
// given, as a registry's error text can.
type leakyRuntime struct{}

func (leakyRuntime) PullImage(_ context.Context, image string, a *runtimeapi.AuthConfig, _ *runtimeapi.PodSandboxConfig) error {
	return errors.New("unauthorized: " + a.Username + ":" + a.Password + " (" + a.Auth + ") at https://" + a.Username + ":" + a.Password + "@registry.example.com/v2/")
}

// A failed pull's reason, which goes to the job's status, shows neither
// the pull secret's password nor its auth string.
func TestAPullsReasonNeverShowsTheSecret(t *testing.T) {
	auth := base64.StdEncoding.EncodeToString([]byte("robot:s3cret-pw"))
	ring, err := NewKeyring([]byte(`{"auths":{"registry.example.com":{"username":"robot","password":"s3cret-pw","auth":"` + auth + `"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Pull(context.Background(), leakyRuntime{}, Job{Images: []string{"registry.example.com/app:1"}, Keyring: ring})
	if r := got[0].Reason; strings.Contains(r, "s3cret-pw") || strings.Contains(r, auth) || !strings.Contains(r, "unauthorized") {
		t.Fatalf("reason %q", r)
	}
}
