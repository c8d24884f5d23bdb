//go:build windows

package pipe

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"

	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// serveEnv makes the test binary a pipe server of another process: the
// pipe named by its value, with the descriptor in serveSDDLEnv (go-winio's
// default when empty), until its standard input closes.
const (
	serveEnv     = "EDGECORE_PIPE_TEST_SERVE"
	serveSDDLEnv = "EDGECORE_PIPE_TEST_SDDL"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(serveEnv); name != "" {
		os.Exit(serve(name, os.Getenv(serveSDDLEnv)))
	}
	os.Exit(m.Run())
}

// serve is the other process: it creates the pipe as any program may,
// without this package's checks, answers every client with its process
// id, and says "serving" once clients may connect.
func serve(name, sddl string) int {
	var c *winio.PipeConfig
	if sddl != "" {
		c = &winio.PipeConfig{SecurityDescriptor: sddl}
	}
	l, err := winio.ListenPipe(Path(name), c)
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	// Wine's placeholder instance, used up as Listen does (see there).
	ctx, cancel := context.WithTimeout(context.Background(), placeholderWait)
	if c, err := winio.DialPipeContext(ctx, Path(name)); err == nil {
		c.Close()
	}
	cancel()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(conn, "%d\n", os.Getpid())
			conn.Close()
		}
	}()
	fmt.Println("serving")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

func testPipe(t *testing.T) string {
	return fmt.Sprintf("edgecore-pipe-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
}

// otherServer starts another process serving name, as a local account
// would before edgecore, and returns its process id.
func otherServer(t *testing.T, name, sddl string) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serveEnv+"="+name, serveSDDLEnv+"="+sddl)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "serving" {
		t.Fatalf("the other server did not start: %q %v", line, err)
	}
	return cmd.Process.Pid
}

func dial(t *testing.T, name string) net.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A pipe served by another process is identified by that process's id,
// the one the system gives for this connection, not by what the server
// says of itself.
func TestServerOfNamesTheServingProcess(t *testing.T) {
	name := testPipe(t)
	pid := otherServer(t, name, "")
	c := dial(t, name)
	s, err := ServerOf(c)
	if err != nil {
		t.Fatal(err)
	}
	if s.PID != pid {
		t.Errorf("ServerOf says process %d serves %s, want the other process %d", s.PID, Path(name), pid)
	}
	if s.PID == os.Getpid() {
		t.Errorf("ServerOf names this test process")
	}
	if s.UID != -1 {
		t.Errorf("UID %d on Windows, want -1", s.UID)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if strings.TrimSpace(line) != fmt.Sprint(pid) {
		t.Errorf("the server says it is process %q, the test started %d", strings.TrimSpace(line), pid)
	}
}

// Someone else created the pipe name first: Listen fails closed and names
// that process, whatever the system would have done with a second first
// instance (Windows refuses it; Wine 8 accepts it and shares the name).
func TestListenRefusesANameAnotherProcessHolds(t *testing.T) {
	name := testPipe(t)
	pid := otherServer(t, name, "")
	l, err := Listen(name, acl.PipeSDDL)
	if err == nil {
		l.Close()
		t.Fatalf("Listen(%s) succeeded while process %d serves it", Path(name), pid)
	}
	var sq *SquattedError
	if !errors.As(err, &sq) {
		t.Fatalf("Listen: %v (%T), want a *SquattedError", err, err)
	}
	if sq.PID != pid || !strings.Contains(err.Error(), fmt.Sprintf("served by process %d", pid)) {
		t.Errorf("Listen: %v; want process %d named", err, pid)
	}
	// The name still belongs to the other process: nothing of this one
	// answers there.
	s, err := ServerOf(dial(t, name))
	if err != nil || s.PID != pid {
		t.Errorf("after the refusal %s is served by %d (%v), want %d", Path(name), s.PID, err, pid)
	}
}

// A squatter whose pipe admits SYSTEM only keeps an unelevated process
// from asking for its id on Windows; Listen still fails closed, naming the
// process when it could be reached and saying why when not. (Wine 8 does
// not enforce a pipe's DACL, so there the id is read.)
func TestListenRefusesANameWhateverItsDACL(t *testing.T) {
	name := testPipe(t)
	pid := otherServer(t, name, "D:P(A;;GA;;;SY)")
	l, err := Listen(name, acl.PipeSDDL)
	if err == nil {
		l.Close()
		t.Fatalf("Listen(%s) succeeded while process %d serves it", Path(name), pid)
	}
	var sq *SquattedError
	if !errors.As(err, &sq) || !(sq.PID == pid || sq.PID == 0 && sq.Why != "") {
		t.Fatalf("Listen: %v (%+v), want a *SquattedError naming process %d, or saying why it cannot", err, sq, pid)
	}
}

func isSystem(t *testing.T) bool {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		t.Fatal(err)
	}
	return u.User.Sid.String() == acl.SystemSID
}

// The pipe edgecore serves is this process's, and its DACL, read back
// from the pipe object through a client's handle, is acl.PipeSDDL's.
func TestListenServesWithThePipeDescriptor(t *testing.T) {
	name := testPipe(t)
	l, err := Listen(name, acl.PipeSDDL)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { time.Sleep(time.Second); c.Close() }()
		}
	}()
	s, err := ServerOf(dial(t, name))
	if err != nil {
		t.Fatal(err)
	}
	if s.PID != os.Getpid() {
		t.Errorf("the pipe is served by %d, want this process %d", s.PID, os.Getpid())
	}
	if s.SDDL == "" {
		t.Fatalf("the pipe's descriptor could not be read back: %s", s.SDDLErr)
	}
	got, err := acl.ParseSDDL(s.SDDL)
	if err != nil {
		t.Fatal(err)
	}
	want, err := acl.ParseSDDL(acl.PipeSDDL)
	if err != nil {
		t.Fatal(err)
	}
	if d := daclDiff(got, want); d != "" {
		t.Errorf("the pipe's DACL reads back as %s, want acl.PipeSDDL %s: %s", s.SDDL, acl.PipeSDDL, d)
	}
	if !got.Protected {
		t.Errorf("the pipe's DACL %s is not protected", s.SDDL)
	}
}

// daclDiff compares two DACLs' allow entries by trustee and rights, with
// generic rights mapped as a pipe maps them (Windows stores GA as FA on a
// file object; Wine keeps GA).
func daclDiff(got, want acl.Security) string {
	norm := func(s acl.Security) map[string]uint32 {
		m := map[string]uint32{}
		for _, a := range s.ACEs {
			mask := a.Mask()
			if mask&0x10000000 != 0 { // GENERIC_ALL
				mask = mask&^0x10000000 | 0x1F01FF
			}
			m[a.Type+" "+acl.SID(a.Trustee)] |= mask
		}
		return m
	}
	g, w := norm(got), norm(want)
	if fmt.Sprint(g) != fmt.Sprint(w) {
		return fmt.Sprintf("entries %v, want %v", g, w)
	}
	return ""
}

// Every instance refuses remote clients. A remote client reaches the pipe
// through the host's own name (\\HOST\pipe\NAME, the SMB loopback), which
// Windows then turns away with access denied.
func TestListenRefusesRemoteClients(t *testing.T) {
	name := testPipe(t)
	l, err := Listen(name, "D:P(A;;GA;;;WD)")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	remote := `\\` + host + `\pipe\` + name
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := winio.DialPipeContext(ctx, remote)
	if err == nil {
		c.Close()
		t.Fatalf("a client through %s (a remote client) was admitted", remote)
	}
	if windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil {
		t.Skipf("Wine has no SMB redirector, so no remote client can be made (%s: %v); every instance is created by "+
			"go-winio with FILE_PIPE_REJECT_REMOTE_CLIENTS (makeServerPipeHandle), which only Windows enforces", remote, err)
	}
	switch {
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
	case errors.Is(err, windows.ERROR_BAD_NETPATH), errors.Is(err, windows.ERROR_BAD_NET_NAME), errors.Is(err, windows.ERROR_PATH_NOT_FOUND):
		t.Skipf("this host does not serve SMB (the Server service is off), so no remote client can be made: %v", err)
	default:
		t.Errorf("a remote client got %v, want access denied", err)
	}
}
