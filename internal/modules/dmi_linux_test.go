//go:build linux

package modules

import (
	"testing"

	"github.com/kubeedge/kubeedge/edge/pkg/devicetwin/dmiserver"
)

// Built for Linux only, where the pipe adapter refuses: the Windows build
// serves the pipe (TestDMIListener checks what it asks for on every OS).
func TestInstallDMIListener(t *testing.T) {
	saved := dmiserver.Listen
	defer func() { dmiserver.Listen = saved }()
	installDMIListener()
	// On Linux the pipe adapter refuses, which shows the pipe path was
	// taken rather than upstream's listener.
	if _, err := dmiserver.Listen("npipe://./pipe/kubeedge-dmi", "unix:///tmp/x/dmi.sock"); err == nil {
		t.Fatal("a named pipe was served on a system without named pipes")
	}
}
