package modules

import (
	"errors"
	"net"
	"reflect"
	"testing"

	"github.com/kubeedge-windows/edgecore/windows/acl"
)

type listenCall struct{ kind, addr, sddl string }

// The DMI endpoint of a Windows configuration is a named pipe that only
// SYSTEM and Administrators may open: the configured pipe, else the one
// upstream derives on Windows; a socket path keeps upstream's listener.
// This test compiles only against the patched upstream (dmiserver.Listen
// is patches/0001's hook), so it also proves that unit tests run in the
// same module graph as the binary.
func TestDMIListener(t *testing.T) {
	var calls []listenCall
	errFake := errors.New("recorded")
	listen := dmiListener(
		func(name, sddl string) (net.Listener, error) {
			calls = append(calls, listenCall{"pipe", name, sddl})
			return nil, errFake
		},
		func(configured, endpoint string) (net.Listener, error) {
			calls = append(calls, listenCall{"upstream", endpoint, ""})
			return nil, errFake
		})
	for _, addr := range [][2]string{
		{"npipe://./pipe/kubeedge-dmi", `npipe://\\.\pipe\edgecore-dmi`},
		{`\\.\pipe\mapper-x`, `npipe://\\.\pipe\edgecore-dmi`},
		{"", `npipe://\\.\pipe\edgecore-dmi`},
		{"/etc/kubeedge", "unix:///etc/kubeedge/dmi.sock"},
	} {
		if _, err := listen(addr[0], addr[1]); !errors.Is(err, errFake) {
			t.Fatalf("%s: %v", addr, err)
		}
	}
	want := []listenCall{
		{"pipe", "kubeedge-dmi", acl.PipeSDDL},
		{"pipe", "mapper-x", acl.PipeSDDL},
		{"pipe", "edgecore-dmi", acl.PipeSDDL},
		{"upstream", "unix:///etc/kubeedge/dmi.sock", ""},
	}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("listeners used:\n got %v\nwant %v", calls, want)
	}
}
