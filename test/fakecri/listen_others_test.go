//go:build !windows

package fakecri

import (
	"os"
	"path/filepath"
	"testing"
)

// A socket file left by a runtime that died is replaced, as containerd does.
func TestListenReplacesStaleSocket(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cri.sock")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Listen("unix://" + p)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
}
