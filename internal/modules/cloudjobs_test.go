package modules

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"
	"github.com/kubeedge/kubeedge/pkg/nodetask/actionflow"
	taskmsg "github.com/kubeedge/kubeedge/pkg/nodetask/message"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/jobpolicy"
	"github.com/kubeedge-windows/edgecore/internal/prepull"
	"github.com/kubeedge-windows/edgecore/internal/testdir"
	"github.com/kubeedge-windows/edgecore/internal/upgrade"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

const joinToken = "3f6e2b1c9d8a7f6e5d4c3b2a19087f6e5d4c3b2a19087f6e5d4c3b2a19087f6e.eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE4OTM0NTYwMDB9.c2lnbmF0dXJl"

// statusLog records the statuses sent, and the waits between them.
type statusLog struct {
	msgs  []taskmsg.UpstreamMessage
	waits []int // indexes of msgs a wait came before
}

func (s *statusLog) send(res taskmsg.Resource, m taskmsg.UpstreamMessage) {
	s.msgs = append(s.msgs, m)
}

// statuses sends through s, recording each wait instead of waiting.
func (s *statusLog) statuses() jobStatuses {
	return jobStatuses{send: s.send, gap: statusGap, sleep: func(context.Context, time.Duration) error {
		s.waits = append(s.waits, len(s.msgs))
		return nil
	}}
}

func (s *statusLog) flow() string {
	var out []string
	for _, m := range s.msgs {
		out = append(out, m.Action+"="+map[bool]string{true: "true", false: "false"}[m.Succ])
	}
	return strings.Join(out, " ")
}

// noService is a service manager that cannot be reached: a hand-over to
// the driver fails before anything changes.
type noService struct{}

func (noService) Query(string) (service.Status, error) {
	return service.Status{}, errors.New("access denied")
}
func (noService) Start(string) error                  { return nil }
func (noService) Stop(string) error                   { return nil }
func (noService) SetCommandLine(string, string) error { return nil }
func (noService) Installed(string) (bool, error) {
	return false, errors.New("access denied")
}
func (noService) Install(service.Config) ([]string, error) { return nil, errors.New("access denied") }
func (noService) Uninstall(string) error                   { return errors.New("access denied") }

func configRunnerOn(t *testing.T) (*configJobs, *statusLog, string, []string) {
	t.Helper()
	raw, err := os.ReadFile("../../config/testdata/windows-join.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(testdir.New(t, "modules-"), "edgecore.yaml")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	var logged []string
	st := &statusLog{}
	c := &configJobs{
		jobs: &upgrade.Jobs{
			ConfigFile: file, Executable: `C:\Program Files\edgecore\edgecore.exe`, Service: "edgecore",
			InService: func() (bool, error) { return true, nil },
			Env:       upgrade.Env{GOOS: config.Windows, Services: noService{}, Service: "edgecore"},
		},
		host:     config.Host{GOOS: config.Windows},
		policy:   func() (jobpolicy.Policy, error) { return jobpolicy.Policy{}, nil },
		token:    joinToken,
		statuses: st.statuses(),
		ctx:      context.Background(),
		logf: func(f string, a ...any) {
			logged = append(logged, strings.TrimSpace(strings.ReplaceAll(f, "%v", ""))+" "+strings.TrimSpace(fmtArgs(a)))
		},
	}
	return c, st, file, logged
}

func fmtArgs(a []any) string {
	b, _ := json.Marshal(a)
	return string(b)
}

func runConfigJob(t *testing.T, c *configJobs, fields map[string]string) {
	t.Helper()
	spec, _ := json.Marshal(operationsv1alpha2.ConfigUpdateJobSpec{UpdateFields: fields})
	configUpdateJobRunner(c).RunAction(context.Background(), "cuj", "win-1", configCheck, spec)
}

func TestAConfigJobThatWouldBreakTheNodeIsRefusedAtCheck(t *testing.T) {
	c, st, file, _ := configRunnerOn(t)
	before, _ := os.ReadFile(file)
	runConfigJob(t, c, map[string]string{"modules.edged.tailoredKubeletConfig.cgroupsPerQOS": "true"})
	if st.flow() != "Check=false" {
		t.Fatalf("flow %s", st.flow())
	}
	for _, w := range []string{"cgroupsPerQOS", "true", "set cgroupsPerQOS: false", "nothing on the node changed"} {
		if !strings.Contains(st.msgs[0].Reason, w) {
			t.Errorf("reason %q lacks %q", st.msgs[0].Reason, w)
		}
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Fatal("the file changed")
	}
}

func TestTheTokenIsNeverInAConfigJobsStatus(t *testing.T) {
	c, st, _, _ := configRunnerOn(t)
	runConfigJob(t, c, map[string]string{"modules.edgeHub.token": joinToken, "modules.edgeHub.httpServer": joinToken})
	if st.flow() != "Check=false" {
		t.Fatalf("flow %s", st.flow())
	}
	if strings.Contains(st.msgs[0].Reason, joinToken) || !strings.Contains(st.msgs[0].Reason, "<redacted>") {
		t.Fatalf("reason %q", st.msgs[0].Reason)
	}
}

// An update the driver cannot take changed nothing: Update fails and a
// RollBack with nothing to do ends the node's task, as the cloud's flow
// wants.
func TestAConfigJobTheDriverCannotTakeEndsWithARollBack(t *testing.T) {
	c, st, _, _ := configRunnerOn(t)
	runConfigJob(t, c, map[string]string{"modules.edged.tailoredKubeletConfig.maxPods": "60"})
	if st.flow() != "Check=true BackUp=true Update=false RollBack=true" {
		t.Fatalf("flow %s", st.flow())
	}
	if !strings.Contains(st.msgs[2].Reason, "access denied") {
		t.Fatalf("reason %q", st.msgs[2].Reason)
	}
	// Upstream's cloudcore may take two statuses sent at once in either
	// order; the RollBack must come after a wait.
	if len(st.waits) != 1 || st.waits[0] != 3 {
		t.Fatalf("waits before statuses %v, want one before the RollBack (status 3)", st.waits)
	}
	last := st.msgs[len(st.msgs)-1]
	if a := actionflow.FlowConfigUpdateJob.Find(last.Action); !(last.Succ && a.NextSuccessful == nil) {
		t.Fatalf("the last status %+v does not end the task", last)
	}
}

func TestConfigJobOutcomesAsTheCloudsActions(t *testing.T) {
	for _, c := range []struct {
		r    upgrade.Report
		want string
	}{
		{upgrade.Report{Event: "Update", Success: true}, "Update=true"},
		{upgrade.Report{Event: "RollBack", Success: true, Reason: "rolled back: the node did not come back"}, "Update=false RollBack=true"},
		{upgrade.Report{Event: "RollBack", Reason: "and so did putting the former one back"}, "Update=false RollBack=false"},
	} {
		st := &statusLog{msgs: configJobMessages(c.r)}
		if st.flow() != c.want {
			t.Errorf("%+v: %s, want %s", c.r, st.flow(), c.want)
		}
		if !c.r.Success && st.msgs[0].Reason != c.r.Reason {
			t.Errorf("%+v: the Update's reason is %q", c.r, st.msgs[0].Reason)
		}
	}
}

type recordingRuntime struct {
	failing string
	auth    map[string]*runtimeapi.AuthConfig
}

func (r *recordingRuntime) PullImage(_ context.Context, image string, a *runtimeapi.AuthConfig, _ *runtimeapi.PodSandboxConfig) error {
	if r.auth == nil {
		r.auth = map[string]*runtimeapi.AuthConfig{}
	}
	r.auth[image] = a
	if image == r.failing {
		return errors.New("not found")
	}
	return nil
}

func TestImagePrePullJobReportsEachImage(t *testing.T) {
	st := &statusLog{}
	rt := &recordingRuntime{failing: "example.com/missing:1"}
	p := &prePullJobs{
		runtime: func() (prepull.Puller, error) { return rt, nil },
		secret: func(ns, name string) (*corev1.Secret, error) {
			if ns != "line" || name != "pull" {
				t.Fatalf("secret %s/%s", ns, name)
			}
			return &corev1.Secret{Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"example.com":{"username":"robot","password":"pw"}}}`)}}, nil
		},
		check:    func([]string) error { return nil },
		diskUsed: func(dir string) (float64, error) { return 40, nil },
		rootDir:  `C:\var\lib\kubelet`,
		// The job's secret is in the node's own namespace.
		nodeNamespace: "line",
		policy:        func() (jobpolicy.Policy, error) { return jobpolicy.Policy{}, nil },
		send:          st.send,
		logf:          func(string, ...any) {},
	}
	spec, _ := json.Marshal(operationsv1alpha2.ImagePrePullJobSpec{ImagePrePullTemplate: operationsv1alpha2.ImagePrePullTemplate{
		Images: []string{"example.com/app:1", "example.com/missing:1"}, ImageSecret: "line/pull", RetryTimes: 1,
		CheckItems: []string{"disk"},
	}})
	imagePrePullJobRunner(p).RunAction(context.Background(), "ipj", "win-1", prePullCheck, spec)
	if st.flow() != "Check=true Pull=false" {
		t.Fatalf("flow %s", st.flow())
	}
	var images []operationsv1alpha2.ImageStatus
	if err := json.Unmarshal([]byte(st.msgs[1].Extend), &images); err != nil {
		t.Fatalf("extend %q: %v", st.msgs[1].Extend, err)
	}
	if len(images) != 2 || images[0].Status != "True" || images[1].Status != "False" || !strings.Contains(images[1].Reason, "after 2 tries") {
		t.Fatalf("images %+v", images)
	}
	if a := rt.auth["example.com/app:1"]; a == nil || a.Username != "robot" {
		t.Fatalf("pulled with %+v", a)
	}
	if !strings.Contains(st.msgs[1].Reason, "example.com/missing:1") {
		t.Fatalf("reason %q", st.msgs[1].Reason)
	}
}

func TestImagePrePullJobChecksTheKubeletsVolume(t *testing.T) {
	st := &statusLog{}
	var measured string
	p := &prePullJobs{
		diskUsed: func(dir string) (float64, error) { measured = dir; return 93.5, nil },
		rootDir:  `D:\kubelet`, send: st.send, logf: func(string, ...any) {},
	}
	spec, _ := json.Marshal(operationsv1alpha2.ImagePrePullJobSpec{ImagePrePullTemplate: operationsv1alpha2.ImagePrePullTemplate{
		Images: []string{"a"}, CheckItems: []string{"disk"}}})
	imagePrePullJobRunner(p).RunAction(context.Background(), "ipj", "win-1", prePullCheck, spec)
	if st.flow() != "Check=false" || measured != `D:\kubelet` || !strings.Contains(st.msgs[0].Reason, "93.50% used") {
		t.Fatalf("flow %s, measured %q, %+v", st.flow(), measured, st.msgs)
	}
}

// A pull secret from a namespace that is neither the node's nor one the
// node's policy names is never fetched: the Pull fails naming the
// namespace and the fix, and no image is pulled with anyone's
// credentials.
func TestImagePrePullJobTakesPullSecretsFromTheNodesNamespaceOnly(t *testing.T) {
	for _, c := range []struct {
		secret, policy string
		fetched        bool
	}{
		{"kube-system/registry", "", false},
		{"default/registry", "", true},
		{"plant-a/registry", "", false},
		{"plant-a/registry", "imagePrePullJob: {pullSecretNamespaces: [plant-a]}", true},
	} {
		st := &statusLog{}
		rt := &recordingRuntime{}
		fetched := false
		pol, err := jobpolicy.Parse([]byte(c.policy))
		if err != nil {
			t.Fatal(err)
		}
		p := &prePullJobs{
			runtime: func() (prepull.Puller, error) { return rt, nil },
			secret: func(ns, name string) (*corev1.Secret, error) {
				fetched = true
				return &corev1.Secret{Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"example.com":{"username":"robot","password":"pw"}}}`)}}, nil
			},
			policy: func() (jobpolicy.Policy, error) { return pol, nil },
			send:   st.send, logf: func(string, ...any) {},
		}
		spec, _ := json.Marshal(operationsv1alpha2.ImagePrePullJobSpec{ImagePrePullTemplate: operationsv1alpha2.ImagePrePullTemplate{
			Images: []string{"example.com/app:1"}, ImageSecret: c.secret}})
		imagePrePullJobRunner(p).RunAction(context.Background(), "ipj", "win-1", prePullPull, spec)
		if fetched != c.fetched {
			t.Errorf("%s with policy %q: fetched %v", c.secret, c.policy, fetched)
		}
		if c.fetched {
			continue
		}
		ns, _, _ := strings.Cut(c.secret, "/")
		if st.flow() != "Pull=false" || !strings.Contains(st.msgs[0].Reason, `"`+ns+`"`) || !strings.Contains(st.msgs[0].Reason, "pullSecretNamespaces") || len(rt.auth) != 0 {
			t.Errorf("%s: flow %s, reason %q, pulls %v", c.secret, st.flow(), st.msgs[0].Reason, rt.auth)
		}
	}
}

// A policy file that cannot be trusted refuses the ConfigUpdateJob at
// Check, naming the file; nothing changes.
func TestAnUntrustedPolicyRefusesConfigJobs(t *testing.T) {
	c, st, file, _ := configRunnerOn(t)
	before, _ := os.ReadFile(file)
	c.policy = func() (jobpolicy.Policy, error) {
		return jobpolicy.Load(`C:\etc\kubeedge\config\cloud-jobs.yaml`,
			func(string) ([]byte, error) { return []byte("configUpdateJob: {fields: [featureGates]}"), nil },
			func(string) error { return errors.New("is owned by WIN\\operator") })
	}
	runConfigJob(t, c, map[string]string{"modules.edged.tailoredKubeletConfig.maxPods": "60"})
	if st.flow() != "Check=false" || !strings.Contains(st.msgs[0].Reason, "cloud-jobs.yaml is not trusted") {
		t.Fatalf("flow %s: %+v", st.flow(), st.msgs)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Fatal("the file changed")
	}
}

// A ConfigUpdateJob with a forbidden field is refused at Check with the
// field and why in the status, as the e2e shows against cloudcore.
func TestAConfigJobWithAForbiddenFieldIsRefusedAtCheck(t *testing.T) {
	c, st, file, _ := configRunnerOn(t)
	before, _ := os.ReadFile(file)
	runConfigJob(t, c, map[string]string{"modules.edged.tailoredKubeletConfig.containerRuntimeEndpoint": "tcp://203.0.113.5:10010"})
	if st.flow() != "Check=false" {
		t.Fatalf("flow %s", st.flow())
	}
	for _, w := range []string{"containerRuntimeEndpoint", "an endpoint", "cloud-jobs.yaml", "nothing on the node changed"} {
		if !strings.Contains(st.msgs[0].Reason, w) {
			t.Errorf("reason %q lacks %q", st.msgs[0].Reason, w)
		}
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Fatal("the file changed")
	}
}

// A node that does not run as the service (the fleet's Linux builds)
// refuses a ConfigUpdateJob at Check saying so, file untouched; the
// reason used to end in "(<nil>)".
func TestAConfigJobOutsideTheServiceIsRefusedAtCheck(t *testing.T) {
	c, st, file, _ := configRunnerOn(t)
	c.jobs.InService = func() (bool, error) { return false, nil }
	before, _ := os.ReadFile(file)
	runConfigJob(t, c, map[string]string{"modules.edged.tailoredKubeletConfig.maxPods": "42"})
	if st.flow() != "Check=false" {
		t.Fatalf("flow %s", st.flow())
	}
	r := st.msgs[0].Reason
	if !strings.Contains(r, `does not run as the Windows service "edgecore": a configuration update restarts the service`) || strings.Contains(r, "<nil>") {
		t.Errorf("reason %q", r)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Fatal("the file changed")
	}
}
