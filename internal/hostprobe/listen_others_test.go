//go:build !windows

package hostprobe

import (
	"net"
	"path/filepath"
	"testing"
)

// testListener is a Unix socket this test process serves: a runtime the
// node trusts on Linux (its own user).
func testListener(t *testing.T) (net.Listener, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	return l, "unix://" + p
}
