package reset_test

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"github.com/kubeedge-windows/edgecore/internal/reset"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
	"github.com/kubeedge-windows/edgecore/windows/acl"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// A join that installs the bundled runtime, then the reset that takes it
// away again: the round trip is in reset's suite, which runs reset, so
// that join's suite never depends on reset.
func TestJoinInstallsTheBundledRuntimeOnAHostWithoutOne(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.EdgecoreIssues(true)
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, hosttest.WithL2Bridge(w.Options()), w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	got := out.String()
	hosttest.MustContain(t, "output", got,
		"Container runtime: no container runtime on this host: the release's is installed.",
		"Pod network: l2bridge with the win-bridge plugin, written by join.",
		"] install the container runtime", "] write the pod network", "] start the container runtime",
		`creating HNS network "edgecore-l2bridge"`, "wrote "+hosttest.CNIL2Bridge,
		`created C:\Program Files\containerd`,
		`wrote C:\Program Files\containerd\config.toml`,
		`installed service "containerd": "C:\Program Files\containerd\bin\containerd.exe" --config "C:\Program Files\containerd\config.toml" --run-service`,
		"containerd v2.1.4 answers at npipe://./pipe/containerd-containerd")
	// containerd runs before edgecore's service is installed, so that
	// the latter depends on it and finds its CRI.
	if want := []string{"install containerd", "start containerd", "install edgecore", "start edgecore"}; !reflect.DeepEqual(w.Services.Calls, want) {
		t.Errorf("service calls %v, want %v", w.Services.Calls, want)
	}
	svc := w.Services.Configs["containerd"]
	if svc.StartType != service.StartAutomatic || len(svc.RestartDelays) == 0 || svc.PreShutdownTimeout == 0 || svc.RuntimeService != "" {
		t.Errorf("containerd's service %+v: want automatic start, recovery actions and a pre-shutdown wait", svc)
	}
	for _, f := range runtimeinstall.Files {
		if !w.FS.Has(hosttest.CtrdDir+`\bin\`+f.Name) && !w.FS.Has(hosttest.CtrdDir+`\cni\bin\`+f.Name) {
			t.Errorf("%s was not installed", f.Name)
		}
	}
	hosttest.MustContain(t, "config.toml", w.FS.Content(hosttest.CtrdConfig), "version = 3", "sandbox = '"+config.WindowsSandboxImage+"'",
		`bin_dirs = ['C:\Program Files\containerd\cni\bin']`, `conf_dir = 'C:\Program Files\containerd\cni\conf'`)
	// containerd's folder is made open to SYSTEM and Administrators only.
	if w.Made[hosttest.CtrdDir] != acl.DirectorySDDL {
		t.Errorf("containerd's folder was made with %q, want %q", w.Made[hosttest.CtrdDir], acl.DirectorySDDL)
	}
	hosttest.MustContain(t, "record", w.FS.Content(hosttest.InstallRecord), `"service": "containerd"`, `containerd.exe`, `"containerd": "v2.1.4"`)
	// The network between the runtime's files and its start, so that the
	// started containerd finds it; through cni-config's rules, with the
	// bundle's win-bridge.
	if i, k, m := strings.Index(got, "] install the container runtime"), strings.Index(got, "] write the pod network"), strings.Index(got, "] start the container runtime"); !(i < k && k < m) {
		t.Errorf("the pod network is not written between the runtime's files and its start:\n%s", got)
	}
	hosttest.MustContain(t, "CNI config", w.FS.Content(hosttest.CNIL2Bridge), `"type": "win-bridge"`, "10.244.2.0/24", "10.96.0.10")
	hosttest.MustContain(t, "network record", w.FS.Content(hosttest.CNINetRecord), `"writtenBy": "join"`, `"mode": "l2bridge"`, `"created": true`)
	if _, ok := w.HNS.Networks["edgecore-l2bridge"]; !ok {
		t.Errorf("no HNS network was created: %v", w.HNS.Calls)
	}

	// reset takes away what join installed, and only that: containerd's
	// images stay in the root join created for it, and the state it left
	// empty goes.
	w.FS.AddFile(hosttest.CtrdDir+`\containerd.log`, "containerd's own log")
	blob := hosttest.CtrdRoot + `\io.containerd.content.v1.content\blobs\sha256\0123`
	w.FS.AddFile(blob, "an image layer")
	out.Reset()
	if err := reset.Run(context.Background(), nil, &out, false, reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	hosttest.MustContain(t, "reset output", out.String(), "remove the pod network join wrote", "removed "+hosttest.CNIL2Bridge,
		`kept HNS network "edgecore-l2bridge" and its record`, `the HNS network "edgecore-l2bridge" (reset --network removes it), and C:\var\lib\kubelet were left alone`,
		"remove the container runtime join installed", `stopped and removed service "containerd"`,
		`kept C:\Program Files\containerd: it holds files the installation did not write`,
		"and the container runtime join installed is removed")
	if strings.Contains(out.String(), "containerd with its containers and images") {
		t.Errorf("reset says containerd was left alone after removing it:\n%s", out.String())
	}
	if len(w.Services.Configs) != 0 {
		t.Errorf("services left: %v", w.Services.Configs)
	}
	for _, p := range []string{hosttest.CtrdExe, hosttest.CtrdConfig, hosttest.CNIBridge, hosttest.InstallRecord, hosttest.CNIL2Bridge} {
		if w.FS.Has(p) {
			t.Errorf("reset left %s", p)
		}
	}
	// The HNS network stays, and its record for reset --network.
	if rec := w.FS.Content(hosttest.CNINetRecord); !strings.Contains(rec, "edgecore-l2bridge") || strings.Contains(rec, "writtenBy") {
		t.Errorf("the network's record after reset: %q", rec)
	}
	hosttest.MustContain(t, "reset output", out.String(), `kept C:\ProgramData\containerd\root: it holds files the installation did not write`,
		`removed C:\ProgramData\containerd\state`)
	if !w.FS.Has(blob) {
		t.Error("reset removed an image layer containerd wrote")
	}
	if !w.FS.Has(hosttest.CtrdDir + `\containerd.log`) {
		t.Error("reset removed a file join did not write")
	}
}

func TestResetLeavesAContainerdJoinDidNotInstall(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.Services.Configs["containerd"] = service.Config{Name: "containerd"}
	w.FS.AddFile(hosttest.CtrdExe, "the operator's")
	var out bytes.Buffer
	if err := reset.Run(context.Background(), nil, &out, false, reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	if _, ok := w.Services.Configs["containerd"]; !ok || !w.FS.Has(hosttest.CtrdExe) {
		t.Errorf("reset removed the operator's containerd:\n%s", out.String())
	}
	hosttest.MustContain(t, "reset output", out.String(), "containerd with its containers and images, the CNI configuration")
}

func TestResetKeepsContainerdWhenTheRecordNamesOtherPaths(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.Services.Configs["containerd"] = service.Config{Name: "containerd"}
	w.FS.AddFile(hosttest.InstallRecord, `{"service": "containerd", "files": ["C:\\Windows\\System32\\kernel32.dll"], "dirs": []}`)
	var out bytes.Buffer
	if err := reset.Run(context.Background(), nil, &out, false, reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	hosttest.MustContain(t, "output", out.String(), `kept containerd:`, `outside C:\Program Files\containerd`)
	if _, ok := w.Services.Configs["containerd"]; !ok {
		t.Error("reset removed the containerd service on a forged record")
	}
}

// join --registry-config writes the bundled containerd's hosts.toml files,
// copies the CA and client certificate into containerd's folder and puts
// the credentials into config.toml only; join --proxy gives both services
// the environment; reset removes every file join wrote for them and
// nothing else.
func TestJoinWritesTheRegistryConfigurationAndProxyThatResetRemoves(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.EdgecoreIssues(true)
	w.FS.AddFile(`C:\certs\ca.pem`, "the private CA")
	w.FS.AddFile(`C:\certs\client.pem`, "the client certificate")
	w.FS.AddFile(`C:\certs\client-key.pem`, "the client key")
	w.FS.AddFile(`C:\certs\registries.yaml`, `mirrors:
  docker.io:
    endpoint: ["https://mirror.example:5000"]
configs:
  mirror.example:5000:
    auth: {username: edge, password: s3cr3t-p4ss}
    tls: {ca_file: 'C:\certs\ca.pem', cert_file: 'C:\certs\client.pem', key_file: 'C:\certs\client-key.pem'}
  insecure.example:
    tls: {insecure_skip_verify: true}
`)
	o := hosttest.WithL2Bridge(w.Options())
	o.RegistryConfig = `C:\certs\registries.yaml`
	o.Proxy.URL = "http://edge:pr0xy-pass@proxy.example:3128"
	o.Proxy.NoProxy = []string{".corp.example"}
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, o, w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	certs := hosttest.CtrdDir + `\certs.d`
	hosttest.MustContain(t, "join output", out.String(), "wrote the registry configuration into "+certs+": 3 hosts.toml, 3 certificate files",
		"warning: insecure.example: configs.insecure.example.tls.insecure_skip_verify is set",
		"Proxy: http://***@proxy.example:3128 for the edgecore and containerd services; NO_PROXY localhost,127.0.0.1,::1,")
	for _, secret := range []string{"s3cr3t-p4ss", "pr0xy-pass"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("join's output shows a credential:\n%s", out.String())
		}
	}
	hosttest.MustContain(t, "docker.io's hosts.toml", w.FS.Content(certs+`\docker.io\hosts.toml`), `[host."https://mirror.example:5000"]`,
		`ca = "`+strings.ReplaceAll(certs, `\`, `\\`)+`\\mirror.example_5000_\\ca.crt"`)
	if w.FS.Content(certs+`\mirror.example_5000_\ca.crt`) != "the private CA" || w.FS.Content(certs+`\mirror.example_5000_\client.key`) != "the client key" {
		t.Error("the CA and client key were not copied into containerd's folder")
	}
	// The copies' folders are SYSTEM's and Administrators' only from
	// their first moment: made inside containerd's folder, made with that
	// descriptor, they inherit it (an empty descriptor at creation).
	if w.Made[hosttest.CtrdDir] != acl.DirectorySDDL {
		t.Errorf("%s was made with %q, want %q", hosttest.CtrdDir, w.Made[hosttest.CtrdDir], acl.DirectorySDDL)
	}
	for _, d := range []string{certs, certs + `\docker.io`, certs + `\mirror.example_5000_`} {
		if sddl, made := w.Made[d]; !made || sddl != "" {
			t.Errorf("%s: made %v with %q, want made inheriting containerd's folder's descriptor", d, made, sddl)
		}
	}
	hosttest.MustContain(t, "config.toml", w.FS.Content(hosttest.CtrdConfig), `config_path = '`+certs+`'`,
		`[plugins."io.containerd.cri.v1.images".registry.configs."mirror.example:5000".auth]`, `password = "s3cr3t-p4ss"`)
	for _, name := range []string{"edgecore", "containerd"} {
		env := strings.Join(w.Services.Configs[name].Environment, "\n")
		if !strings.Contains(env, "HTTPS_PROXY=http://edge:pr0xy-pass@proxy.example:3128") || !strings.Contains(env, "10.244.2.0/24") ||
			!strings.Contains(env, "10.96.0.0/12") || !strings.Contains(env, ".corp.example") {
			t.Errorf("the %s service's environment: %q", name, env)
		}
	}

	w.FS.AddFile(certs+`\operator.example\hosts.toml`, "the operator's own")
	out.Reset()
	if err := reset.Run(context.Background(), nil, &out, false, reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	for _, p := range []string{certs + `\docker.io\hosts.toml`, certs + `\mirror.example_5000_\ca.crt`, certs + `\mirror.example_5000_\client.key`,
		certs + `\insecure.example\hosts.toml`, certs + `\docker.io`, hosttest.CtrdConfig} {
		if w.FS.Has(p) {
			t.Errorf("reset left %s", p)
		}
	}
	if !w.FS.Has(certs + `\operator.example\hosts.toml`) {
		t.Error("reset removed a registry configuration join did not write")
	}
	if len(w.Services.Configs) != 0 {
		t.Errorf("services (and with them their environment) left: %v", w.Services.Configs)
	}
	if strings.Contains(out.String(), "s3cr3t-p4ss") {
		t.Errorf("reset's output shows a credential:\n%s", out.String())
	}
}

// --registry-config configures the containerd join installs: with the
// host's own runtime join refuses it, naming both ways forward.
func TestJoinRefusesARegistryConfigForTheHostsRuntime(t *testing.T) {
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.FS.AddFile(`C:\certs\registries.yaml`, "mirrors:\n  docker.io:\n    endpoint: [\"https://mirror.example\"]\n")
	o := w.Options()
	o.Runtime, o.RegistryConfig = runtimeinstall.ChoiceHost, `C:\certs\registries.yaml`
	var out bytes.Buffer
	err := join.Run(context.Background(), &out, o, w.System())
	if err == nil {
		t.Fatalf("join accepted a registry configuration for the host's containerd:\n%s", out.String())
	}
	hosttest.MustContain(t, "error", err.Error(), "--registry-config configures the containerd join installs", "config_path", "--runtime bundled")
	if len(w.Services.Calls) != 0 {
		t.Errorf("join changed services: %v", w.Services.Calls)
	}
}

// containerd's folders a containerd of the host made before join (so
// judged safe, and used as found) are not join's: reset takes away the
// runtime join installed, and leaves those folders, empty or not.
func TestResetLeavesContainerdsFoldersJoinFound(t *testing.T) {
	const containerdMade = "O:SYD:P(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)"
	w := hosttest.NewWorld(t)
	w.WithBundle()
	w.EdgecoreIssues(true)
	w.FS.AddDir(`C:\ProgramData`)
	w.SDDL = map[string]string{}
	for _, d := range []string{hosttest.CtrdData, hosttest.CtrdRoot, hosttest.CtrdState} {
		w.FS.AddDir(d)
		w.SDDL[d] = containerdMade
	}
	var out bytes.Buffer
	if err := join.Run(context.Background(), &out, hosttest.WithL2Bridge(w.Options()), w.System()); err != nil {
		t.Fatalf("join failed: %v\n%s", err, out.String())
	}
	for _, d := range []string{hosttest.CtrdData, hosttest.CtrdRoot, hosttest.CtrdState} {
		if _, made := w.Made[d]; made {
			t.Errorf("join made %s, which was there before it", d)
		}
	}
	out.Reset()
	if err := reset.Run(context.Background(), nil, &out, false, reset.Options{ConfigFile: hosttest.CfgFile, LogFile: hosttest.LogFile, Force: true, Host: w.Host, Layout: config.NewLayout(w.Host)}, w.System()); err != nil {
		t.Fatalf("reset failed: %v\n%s", err, out.String())
	}
	hosttest.MustContain(t, "reset output", out.String(), "remove the container runtime join installed")
	if w.FS.Has(hosttest.CtrdExe) {
		t.Errorf("reset left the runtime join installed:\n%s", out.String())
	}
	for _, d := range []string{hosttest.CtrdData, hosttest.CtrdRoot, hosttest.CtrdState} {
		if !w.FS.Has(d) {
			t.Errorf("reset removed %s, which join did not create:\n%s", d, out.String())
		}
	}
}
