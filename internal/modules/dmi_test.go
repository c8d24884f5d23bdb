package modules

import (
	"errors"
	"net"
	"reflect"
	"testing"

	"github.com/kubeedge/kubeedge/edge/pkg/devicetwin/dmiserver"

	"github.com/kubeedge-windows/edgecore/windows/acl"
)

type listenCall struct{ kind, addr, sddl string }

// The DMI endpoint of a Windows configuration is a named pipe that only
// SYSTEM and Administrators may open; a socket path keeps upstream's
// listener. This test compiles only against the patched upstream
// (dmiserver.Listen is patches/0001's hook), so it also proves that unit
// tests run in the same module graph as the binary.
func TestDMIListener(t *testing.T) {
	var calls []listenCall
	errFake := errors.New("recorded")
	listen := dmiListener(
		func(name, sddl string) (net.Listener, error) {
			calls = append(calls, listenCall{"pipe", name, sddl})
			return nil, errFake
		},
		func(addr string) (net.Listener, error) {
			calls = append(calls, listenCall{"unix", addr, ""})
			return nil, errFake
		})
	for _, addr := range []string{"npipe://./pipe/kubeedge-dmi", `\\.\pipe\mapper-x`, "/etc/kubeedge/dmi.sock", `C:\etc\kubeedge\dmi.sock`} {
		if _, err := listen(addr); !errors.Is(err, errFake) {
			t.Fatalf("%s: %v", addr, err)
		}
	}
	want := []listenCall{
		{"pipe", "kubeedge-dmi", acl.PipeSDDL},
		{"pipe", "mapper-x", acl.PipeSDDL},
		{"unix", "/etc/kubeedge/dmi.sock", ""},
		{"unix", `C:\etc\kubeedge\dmi.sock`, ""},
	}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("listeners used:\n got %v\nwant %v", calls, want)
	}
}

func TestInstallDMIListener(t *testing.T) {
	saved := dmiserver.Listen
	defer func() { dmiserver.Listen = saved }()
	dmiserver.Listen = nil
	installDMIListener()
	if dmiserver.Listen == nil {
		t.Fatal("the DMI listener hook is not filled")
	}
	// On Linux the pipe adapter refuses, which shows the pipe path was
	// taken rather than upstream's socket code (which would create a file).
	if _, err := dmiserver.Listen("npipe://./pipe/kubeedge-dmi"); err == nil {
		t.Fatal("a named pipe was served on a system without named pipes")
	}
}
