package servertrust

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/windows/pipe"
	"github.com/kubeedge-windows/edgecore/windows/proc"
)

const (
	containerdPipe = `\\.\pipe\containerd-containerd`
	userSID        = "S-1-5-21-1004336348-1177238915-682003330-1001"
	// go-winio's default descriptor (RtlDefaultNpAcl), as containerd's
	// pipe has it when the service made it.
	containerdSDDL = "O:BAD:(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;S-1-5-18)(A;;FR;;;WD)(A;;FR;;;AN)"
	// The same default, made by a user's program: the user owns it.
	userPipeSDDL = "O:" + userSID + "D:(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;" + userSID + ")(A;;FR;;;WD)(A;;FR;;;AN)"
)

// fakeHost records every question and answers from its fields.
type fakeHost struct {
	server     pipe.Server
	serverErr  error
	ids        map[int]proc.Identity
	servicePID int
	state      string
	serviceErr error
	calls      []string
}

func (f *fakeHost) host(goos string) Host {
	return Host{
		GOOS: goos,
		Server: func(c net.Conn) (pipe.Server, error) {
			f.calls = append(f.calls, "server")
			return f.server, f.serverErr
		},
		Identify: func(pid int) (proc.Identity, error) {
			f.calls = append(f.calls, fmt.Sprintf("identify %d", pid))
			id, ok := f.ids[pid]
			if !ok {
				return proc.Identity{}, errors.New("The parameter is incorrect.")
			}
			return id, nil
		},
		Service: func(name string) (int, string, error) {
			f.calls = append(f.calls, "service "+name)
			return f.servicePID, f.state, f.serviceErr
		},
		SelfPID: 4242,
		SelfUID: 0,
	}
}

var (
	system = proc.Identity{PID: 812, Account: "S-1-5-18", AccountName: `NT AUTHORITY\SYSTEM`, Image: `C:\Program Files\containerd\bin\containerd.exe`}
	alice  = proc.Identity{PID: 6120, Account: userSID, AccountName: `WIN-EDGE\alice`, Image: `C:\Users\alice\Downloads\fakecri.exe`}
)

func TestRuntimeOnWindows(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    fakeHost
		// want is "" for trusted, else text the refusal must hold.
		want []string
	}{
		{"containerd's service, as SYSTEM, with containerd's own pipe",
			fakeHost{server: pipe.Server{PID: 812, SDDL: containerdSDDL, UID: -1}, ids: map[int]proc.Identity{812: system}, servicePID: 812, state: "Running"}, nil},
		{"a server of an administrators-only pipe, not the service",
			fakeHost{server: pipe.Server{PID: 900, SDDL: AdminOnlyPipeSDDL, UID: -1}, ids: map[int]proc.Identity{900: {Account: "S-1-5-18"}}, state: "not installed"}, nil},
		{"an administrators-only pipe SYSTEM owns",
			fakeHost{server: pipe.Server{PID: 900, SDDL: "O:SYD:P(A;;FA;;;SY)(A;;FA;;;BA)", UID: -1}, ids: map[int]proc.Identity{}, state: "not installed"}, nil},
		{"a user's CRI server started before containerd",
			fakeHost{server: pipe.Server{PID: 6120, SDDL: userPipeSDDL, UID: -1}, ids: map[int]proc.Identity{6120: alice}, state: "Stopped"},
			[]string{`the container runtime's pipe \\.\pipe\containerd-containerd is served by process 6120 (C:\Users\alice\Downloads\fakecri.exe, running as WIN-EDGE\alice (` + userSID + `))`,
				"the containerd service is stopped", "its pipe is owned by " + userSID, "Stop-Process -Id 6120"}},
		{"a user's server while containerd runs (it restarted, and the user won the name)",
			fakeHost{server: pipe.Server{PID: 6120, SDDL: userPipeSDDL, UID: -1}, ids: map[int]proc.Identity{6120: alice}, servicePID: 812, state: "Running"},
			[]string{"process 6120", "the containerd service runs as process 812"}},
		{"the service's process, but not as SYSTEM",
			fakeHost{server: pipe.Server{PID: 812, SDDL: containerdSDDL, UID: -1}, ids: map[int]proc.Identity{812: {Account: userSID, AccountName: `WIN-EDGE\svc`}}, servicePID: 812, state: "Running"},
			[]string{"it is the containerd service's process, but runs as WIN-EDGE\\svc", "its pipe admits others: Everyone may read"}},
		{"the service's process, account unreadable",
			fakeHost{server: pipe.Server{PID: 812, SDDL: containerdSDDL, UID: -1}, ids: map[int]proc.Identity{}, servicePID: 812, state: "Running"},
			[]string{"its account could not be read (The parameter is incorrect.): run from an elevated prompt"}},
		{"an administrators-owned pipe others may add instances to",
			fakeHost{server: pipe.Server{PID: 900, SDDL: "O:BAD:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x100004;;;BU)", UID: -1}, ids: map[int]proc.Identity{900: alice}, state: "not installed"},
			[]string{"the containerd service is not installed", "its pipe admits others: BUILTIN\\Users may change or delete (0x100004)"}},
		{"a pipe whose descriptor could not be read",
			fakeHost{server: pipe.Server{PID: 900, SDDLErr: "Access is denied.", UID: -1}, ids: map[int]proc.Identity{900: alice}, state: "not installed"},
			[]string{"its pipe's owner and DACL could not be read (Access is denied.)"}},
		{"a server the system cannot name (a TCP endpoint)",
			fakeHost{serverErr: errors.New("a tcp connection is not a named pipe: its server cannot be identified")},
			[]string{"served by a process that could not be identified", "use containerd's named pipe"}},
		{"the service cannot be queried",
			fakeHost{server: pipe.Server{PID: 6120, SDDL: userPipeSDDL, UID: -1}, ids: map[int]proc.Identity{6120: alice}, serviceErr: errors.New("Access is denied.")},
			[]string{"the containerd service could not be queried (Access is denied.)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.h
			err := h.host("windows").Check(Runtime, containerdPipe, nil)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var r *RefusedError
			if !errors.As(err, &r) {
				t.Fatalf("got %v, want a refusal", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal\n  %v\ndoes not say %q", err, w)
				}
			}
		})
	}
}

// The whole refusal, as the operator reads it.
func TestRefusalNamesPipeProcessAccountAndFix(t *testing.T) {
	h := fakeHost{server: pipe.Server{PID: 6120, SDDL: userPipeSDDL, UID: -1}, ids: map[int]proc.Identity{6120: alice}, state: "not installed"}
	err := h.host("windows").Check(Runtime, containerdPipe, nil)
	want := `the container runtime's pipe \\.\pipe\containerd-containerd is served by process 6120 (C:\Users\alice\Downloads\fakecri.exe, running as WIN-EDGE\alice (` + userSID + `)), ` +
		`which edgecore does not trust: it is not the containerd service's process running as SYSTEM (the containerd service is not installed), ` +
		`and its pipe is owned by ` + userSID + `, not SYSTEM or Administrators (` + userPipeSDDL + `); it would receive every pod's secrets and registry credentials; ` +
		`fix: stop process 6120 (Stop-Process -Id 6120 in an elevated PowerShell) and start containerd (Start-Service containerd), then try again; ` +
		`a runtime of your own must run as the containerd service under LocalSystem, or serve its pipe with a descriptor that admits SYSTEM and Administrators only, such as O:BAD:P(A;;GA;;;SY)(A;;GA;;;BA)`
	if err == nil || err.Error() != want {
		t.Errorf("got\n  %v\nwant\n  %s", err, want)
	}
	if fmt.Sprint(h.calls) != "[server identify 6120 service containerd]" {
		t.Errorf("questions asked: %v", h.calls)
	}
}

func TestRuntimeOnLinux(t *testing.T) {
	for _, tc := range []struct {
		uid  int
		want string
	}{
		{0, ""},
		{4242, ""}, // the node's own user (SelfUID is set below)
		{1000, `the container runtime's socket /run/containerd/containerd.sock is served by process 77 (/home/alice/fakecri, running as alice (1000)), which edgecore does not trust: ` +
			`it runs as user 1000, neither root nor the node's own user (4242), and would receive every pod's secrets and registry credentials; ` +
			`fix: stop process 77 (kill 77) and start containerd (systemctl start containerd), then try again`},
	} {
		h := fakeHost{server: pipe.Server{PID: 77, UID: tc.uid}, ids: map[int]proc.Identity{77: {Account: "1000", AccountName: "alice", Image: "/home/alice/fakecri"}}}
		host := h.host("linux")
		host.SelfUID = 4242
		err := host.Check(Runtime, "/run/containerd/containerd.sock", nil)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("uid %d refused: %v", tc.uid, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("uid %d:\n got %v\nwant %s", tc.uid, err, tc.want)
		}
		for _, c := range h.calls {
			if strings.HasPrefix(c, "service") {
				t.Errorf("the service manager was asked on Linux: %v", h.calls)
			}
		}
	}
}

func TestSelf(t *testing.T) {
	own := fakeHost{server: pipe.Server{PID: 4242, UID: -1}}
	if err := own.host("windows").Check(Self, `\\.\pipe\edgecore-kubelet`, nil); err != nil {
		t.Errorf("this process's own pipe refused: %v", err)
	}
	if fmt.Sprint(own.calls) != "[server]" {
		t.Errorf("questions asked of this process's own pipe: %v", own.calls)
	}
	other := fakeHost{server: pipe.Server{PID: 6120, UID: -1}, ids: map[int]proc.Identity{6120: alice}}
	err := other.host("windows").Check(Self, `\\.\pipe\edgecore-kubelet`, nil)
	want := `edgecore's own kubelet server endpoint \\.\pipe\edgecore-kubelet is served by process 6120 (C:\Users\alice\Downloads\fakecri.exe, running as WIN-EDGE\alice (` + userSID + `)), ` +
		`which edgecore does not trust: it is not this edgecore (process 4242), which serves it; fix: stop the other process and restart edgecore, which then serves it itself`
	if err == nil || err.Error() != want {
		t.Errorf("got\n  %v\nwant\n  %s", err, want)
	}
}

// conn records whether it was closed.
type conn struct {
	net.Conn
	closed bool
}

func (c *conn) Close() error { c.closed = true; return nil }

func TestDialerClosesARefusedConnection(t *testing.T) {
	bad := fakeHost{server: pipe.Server{PID: 6120, SDDL: userPipeSDDL, UID: -1}, ids: map[int]proc.Identity{6120: alice}, state: "not installed"}
	c := &conn{}
	dial := bad.host("windows").Dialer(Runtime, containerdPipe, func(context.Context) (net.Conn, error) { return c, nil })
	got, err := dial(context.Background())
	var r *RefusedError
	if got != nil || !errors.As(err, &r) || !c.closed {
		t.Errorf("dial = %v, %v; closed %v; want the refusal and the connection closed", got, err, c.closed)
	}
	good := fakeHost{server: pipe.Server{PID: 812, SDDL: containerdSDDL, UID: -1}, ids: map[int]proc.Identity{812: system}, servicePID: 812}
	c = &conn{}
	dial = good.host("windows").Dialer(Runtime, containerdPipe, func(context.Context) (net.Conn, error) { return c, nil })
	if got, err := dial(context.Background()); got != c || err != nil || c.closed {
		t.Errorf("dial = %v, %v; closed %v; want the connection", got, err, c.closed)
	}
	failed := errors.New("The system cannot find the file specified.")
	dial = good.host("windows").Dialer(Runtime, containerdPipe, func(context.Context) (net.Conn, error) { return nil, failed })
	if _, err := dial(context.Background()); err != failed {
		t.Errorf("a failed dial gave %v, want its own error", err)
	}
}

func TestDisplayAddress(t *testing.T) {
	if got := DisplayAddress("npipe", "//./pipe/containerd-containerd"); got != containerdPipe {
		t.Errorf("npipe: %q", got)
	}
	if got := DisplayAddress("unix", "/run/containerd/containerd.sock"); got != "/run/containerd/containerd.sock" {
		t.Errorf("unix: %q", got)
	}
}
