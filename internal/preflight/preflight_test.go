package preflight

import (
	"bytes"
	"context"
	"testing"
)

func TestHealthyHostRendersAllPass(t *testing.T) {
	rows := Run(context.Background(), healthyConfig(), healthyHost().probes())
	var out bytes.Buffer
	if err := Render(&out, rows); err != nil {
		t.Fatal(err)
	}
	want := `STATUS  CHECK                  DETAIL
PASS    Windows build          Windows Server 2022 Datacenter, build 20348.2227 (Windows Server 2022): pods need images tagged ltsc2022, e.g. mcr.microsoft.com/windows/nanoserver:ltsc2022
PASS    Containers feature     enabled
PASS    Administrator          running elevated
PASS    No kubelet/kube-proxy  neither kubelet.exe nor kube-proxy.exe is running
PASS    Free disk              40.0 GiB free for C:\var\lib\kubelet
PASS    containerd CRI         containerd v1.7.13 (CRI v1) at npipe://./pipe/containerd-containerd: RuntimeReady
PASS    CRI network            NetworkReady
PASS    CNI config             C:\Program Files\containerd\cni\conf\0-containerd-nat.conf (nat, pods in 10.244.1.0/24)
PASS    CNI plugin             nat.exe in C:\Program Files\containerd\cni\bin
PASS    Sandbox image          registry.k8s.io/pause:3.9 has windows/amd64 10.0.20348.1906 for this host's build 20348 (Windows Server 2022, ltsc2022)
PASS    cloudcore websocket    192.0.2.10:10000 reachable
PASS    cloudcore https        192.0.2.10:10002 reachable
PASS    Clock                  2025-03-01 12:00:00Z is within the validity of C:\etc\kubeedge\ca\rootCA.crt, C:\etc\kubeedge\certs\server.crt

preflight: 0 FAIL, 0 WARN, 13 PASS
`
	if out.String() != want {
		t.Errorf("table\n got:\n%s\nwant:\n%s", out.String(), want)
	}
	if code := ExitCode(rows); code != 0 {
		t.Errorf("exit code %d for an all-PASS table", code)
	}
}

func TestFailRowRendersItsFixAndExitsOne(t *testing.T) {
	h := healthyHost()
	h.elevated = false
	rows := Run(context.Background(), healthyConfig(), h.probes())
	var out bytes.Buffer
	if err := Render(&out, rows[2:3]); err != nil {
		t.Fatal(err)
	}
	want := `STATUS  CHECK          DETAIL
FAIL    Administrator  not running as Administrator; edgecore needs it for containerd's pipe and its own directories
                       fix: open PowerShell with "Run as administrator" and run the command again

preflight: 1 FAIL, 0 WARN, 0 PASS
`
	if out.String() != want {
		t.Errorf("table\n got:\n%s\nwant:\n%s", out.String(), want)
	}
	if code := ExitCode(rows); code != 1 {
		t.Errorf("exit code %d with a FAIL row, want 1", code)
	}
}

func TestWarningsAloneExitZero(t *testing.T) {
	rows := Run(context.Background(), healthyConfig(), Probes{})
	for _, r := range rows {
		if r.Status != Warn || r.Detail != "not checked: no probe for it in this build" {
			t.Errorf("row %+v: a missing probe must give a WARN saying so", r)
		}
	}
	if len(rows) != 13 {
		t.Errorf("%d rows, want one per check (13)", len(rows))
	}
	if code := ExitCode(rows); code != 0 {
		t.Errorf("exit code %d without a FAIL row", code)
	}
}
