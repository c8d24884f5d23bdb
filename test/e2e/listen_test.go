//go:build e2e

package e2e

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// listeningSockets lists what the process pid listens on, as its own file
// descriptors show it: TCP sockets in LISTEN, UDP sockets bound and not
// connected, and Unix stream sockets that accept connections, each as
// "tcp 127.0.0.1:10350", "udp [::]:53" or "unix /path". Under Wine the
// process is the Unix process that runs the Windows program: its Winsock
// sockets are that process's sockets (named pipes live in wineserver and
// are not sockets).
func listeningSockets(pid int) ([]string, error) {
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var out []string
	for _, proto := range []string{"tcp", "tcp6", "udp", "udp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, proto))
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || !inodes[f[9]] {
				continue
			}
			local, remote, state := f[1], f[2], f[3]
			switch {
			case strings.HasPrefix(proto, "tcp") && state == "0A": // LISTEN
			case strings.HasPrefix(proto, "udp") && state == "07" && strings.Trim(strings.Split(remote, ":")[0], "0") == "":
			default:
				continue
			}
			addr, err := procAddr(local)
			if err != nil {
				return nil, fmt.Errorf("/proc/%d/net/%s: %w", pid, proto, err)
			}
			out = append(out, strings.TrimSuffix(proto, "6")+" "+addr)
		}
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/unix", pid))
	if err != nil {
		return nil, err
	}
	// Num RefCount Protocol Flags Type St Inode Path; __SO_ACCEPTCON
	// (0x10000) in Flags marks a listening socket.
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 7 || !inodes[f[6]] {
			continue
		}
		flags, err := strconv.ParseUint(f[3], 16, 32)
		if err != nil || flags&0x10000 == 0 {
			continue
		}
		path := "(unnamed)"
		if len(f) > 7 {
			path = f[7]
		}
		out = append(out, "unix "+path)
	}
	sort.Strings(out)
	return out, nil
}

// procAddr turns /proc/net's "0100007F:2856" (IPv4, or 32 hex digits for
// IPv6, each 32-bit word in the host's byte order) into "127.0.0.1:10326".
func procAddr(s string) (string, error) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("address %q", s)
	}
	b, err := hex.DecodeString(host)
	if err != nil || len(b) != 4 && len(b) != 16 {
		return "", fmt.Errorf("address %q", s)
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	ip, _ := netip.AddrFromSlice(b)
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return "", fmt.Errorf("port of %q", s)
	}
	return netip.AddrPortFrom(ip.Unmap(), uint16(p)).String(), nil
}

// expectedListeners is everything the edge's edgecore may listen on, and
// why: on Windows nothing the Unix side sees (the kubelet server and the
// kubelet's device-plugin registration are named pipes); on Linux the
// kubelet server's socket, in a folder only root may enter, and the
// device manager's registration socket, which the Linux kubelet always
// serves at the fixed path pluginapi.KubeletSocket
// (/var/lib/kubelet/device-plugins/kubelet.sock), whatever its root
// directory. The pod-resources socket is not among them: the gate
// KubeletPodResources is off by default in this Kubernetes (alpha again
// in the 1.31+ versioned gates), so the kubelet serves none.
func expectedListeners(e *edge) []string {
	if e.os == config.Windows {
		return nil
	}
	ep := config.KubeletServerOf(&v1alpha2.EdgeCoreConfig{DataBase: &v1alpha2.DataBase{DataSource: filepath.Join(e.dir, "edgecore.db")}}, e.os)
	want := []string{
		"unix " + ep.Socket,
		"unix " + pluginapi.KubeletSocket,
	}
	sort.Strings(want)
	return want
}

// kubeletHealthzPort is the kubelet's own default health port, which
// edged's configuration does not set (so the kubelet serves none).
const kubeletHealthzPort = 10248

// nothingAnswersLocalCallers checks what a local account could reach of
// the running edgecore: the exact set of sockets it listens on, and that
// the TCP ports upstream serves the kubelet on (the configured address and
// the node's IP; readOnlyPort, and the kubelet's default health port)
// refuse a connection at once; a connection that hangs until a time-out is a failure too, since
// a firewall's drop would hide a listener. On Windows the kubelet server's
// pipe must admit SYSTEM and Administrators only, read back from the pipe
// edgecore made.
func nothingAnswersLocalCallers(t *testing.T, e *edge) {
	t.Helper()
	got, err := listeningSockets(e.edgecore.cmd.Process.Pid)
	if err != nil {
		fatalf(t, "the sockets of edgecore (pid %d): %v", e.edgecore.cmd.Process.Pid, err)
	}
	want := expectedListeners(e)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		errorf(t, "edgecore (%s edge) listens on\n  %s\nwant exactly\n  %s", e.os, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	fmt.Printf("e2e (%s edge): edgecore's listening sockets: [%s]\n", e.os, strings.Join(got, ", "))

	cfg, _, err := config.Load(e.cfgPath, config.Host{GOOS: e.os})
	if err != nil {
		fatal(t, err)
	}
	k := cfg.Modules.Edged.TailoredKubeletConfig
	ports := []int32{k.ReadOnlyPort, kubeletHealthzPort}
	hosts := []string{k.Address, e.nodeIP}
	if k.Address == "" || k.Address == "0.0.0.0" {
		hosts[0] = "127.0.0.1"
	}
	for _, h := range hosts {
		for _, p := range ports {
			addr := net.JoinHostPort(h, strconv.Itoa(int(p)))
			if err := refused(addr); err != nil {
				errorf(t, "%s: %v", addr, err)
				continue
			}
			fmt.Printf("e2e (%s edge): %s refused at once, as nothing listens there\n", e.os, addr)
		}
	}
	if e.os == config.Windows {
		kubeletPipeDACL(t, e)
	}
}

// refused is nil when a TCP connection to addr is refused (RST), and says
// what happened otherwise: an answer, or a time-out, which a refusal is
// not.
func refused(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		c.Close()
		return errors.New("a connection was accepted: something listens there")
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return nil
	}
	return fmt.Errorf("not refused: %w", err)
}

// kubeletPipeDACL reads the kubelet server's pipe's DACL back through a
// client handle, with a Windows program in the edge's prefix (dmiclient's
// acl command), and wants acl.PipeSDDL: SYSTEM and Administrators only.
// Wine keeps a pipe's descriptor as its server set it (it does not check
// it when a client opens the pipe: that refusal is the DMI pipe's Wine
// test's, shown with an event).
func kubeletPipeDACL(t *testing.T, e *edge) {
	t.Helper()
	pipe := `\\.\pipe\` + config.KubeletServerPipe
	bin, args := e.command(mustEnv(t, "DMICLIENT_EXE"), "acl", pipe)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), e.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		errorf(t, "dmiclient acl %s: %v\n%s", pipe, err, out)
		return
	}
	got := ""
	for _, line := range strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n") {
		if v, ok := strings.CutPrefix(line, "dacl:"); ok {
			got = strings.TrimSpace(v)
		}
	}
	// acl.PipeSDDL as set, or with the generic right mapped to the
	// file right it stands for, as Windows reads it back.
	if got != acl.PipeSDDL && got != "D:P(A;;FA;;;SY)(A;;FA;;;BA)" {
		errorf(t, "the kubelet server's pipe %s has DACL %q, want %s (SYSTEM and Administrators only)\n%s", pipe, got, acl.PipeSDDL, out)
		return
	}
	fmt.Printf("e2e (windows edge): the kubelet server's pipe %s reads back DACL %s\n", pipe, got)
}

// portHolders names every process with a UDP socket bound to port, or a
// TCP socket listening on it, on any address, as "udp addr by pid name":
// what a failed bind of the node's DNS responder was up against.
func portHolders(port uint16) []string {
	owners := map[string][]string{} // socket inode -> "pid name"
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, _ := os.ReadDir(fdDir)
		for _, fd := range fds {
			target, _ := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if inode, ok := strings.CutPrefix(target, "socket:["); ok {
				comm, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
				owners[strings.TrimSuffix(inode, "]")] = append(owners[strings.TrimSuffix(inode, "]")], p.Name()+" "+strings.TrimSpace(string(comm)))
			}
		}
	}
	var out []string
	for _, proto := range []string{"udp", "udp6", "tcp", "tcp6"} {
		data, _ := os.ReadFile("/proc/net/" + proto)
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || strings.HasPrefix(proto, "tcp") && f[3] != "0A" {
				continue
			}
			addr, err := procAddr(f[1])
			if err != nil || netip.MustParseAddrPort(addr).Port() != port {
				continue
			}
			who := owners[f[9]]
			if len(who) == 0 {
				who = []string{"(no process)"}
			}
			out = append(out, fmt.Sprintf("%s %s by %s", proto, addr, strings.Join(who, ", ")))
		}
	}
	return out
}
