//go:build windows

package hostprobe

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/servertrust"
	"github.com/kubeedge-windows/edgecore/windows/pipe"
)

// testListener is a pipe only SYSTEM and Administrators may open, which
// they own: a runtime the node trusts on Windows.
func testListener(t *testing.T) (net.Listener, string) {
	t.Helper()
	name := fmt.Sprintf("edgecore-hostprobe-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
	l, err := pipe.Listen(name, servertrust.AdminOnlyPipeSDDL)
	if err != nil {
		t.Fatal(err)
	}
	return l, "npipe://./pipe/" + name
}
