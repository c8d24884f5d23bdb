package config

import (
	"strings"
	"testing"
)

// The kubelet server is a pipe on Windows and a socket in a folder of its
// own beside the database elsewhere; never the TCP address of the file.
func TestKubeletServerEndpoint(t *testing.T) {
	c, err := Sample(KindDefault, testHost(Windows))
	if err != nil {
		t.Fatal(err)
	}
	if got := KubeletServerOf(c, Windows); got.Pipe != "edgecore-kubelet" || got.Socket != "" || got.String() != `\\.\pipe\edgecore-kubelet` {
		t.Errorf("Windows: %+v (%s)", got, got)
	}
	lc, err := Sample(KindDefault, testHost(Linux))
	if err != nil {
		t.Fatal(err)
	}
	lc.DataBase.DataSource = "/var/lib/kubeedge/edgecore.db"
	got := KubeletServerOf(lc, Linux)
	if got.Pipe != "" || got.SocketDir != "/var/lib/kubeedge/kubelet-server" || got.Socket != "/var/lib/kubeedge/kubelet-server/kubelet.sock" {
		t.Errorf("Linux: %+v", got)
	}
}

// readOnlyPort 0 would leave the node without the server edged waits for
// before it starts any pod; a database so deep that the socket beside it
// cannot be bound is named with its field.
func TestKubeletServerRefusals(t *testing.T) {
	c, err := Sample(KindDefault, testHost(Windows))
	if err != nil {
		t.Fatal(err)
	}
	c.Modules.Edged.TailoredKubeletConfig.ReadOnlyPort = 0
	errs := validateAll(c, Windows)
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1: %v", len(errs), errs)
	}
	for _, want := range []string{"modules.edged.tailoredKubeletConfig.readOnlyPort", "fix: set it to 10350", `\\.\pipe\edgecore-kubelet`} {
		if !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%q lacks %q", errs[0].Error(), want)
		}
	}

	lc, err := Sample(KindDefault, testHost(Linux))
	if err != nil {
		t.Fatal(err)
	}
	lc.DataBase.DataSource = "/var/lib/" + strings.Repeat("deep/", 20) + "edgecore.db"
	errs = validateAll(lc, Linux)
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1: %v", len(errs), errs)
	}
	for _, want := range []string{"database.dataSource", "longer than the 107 bytes", "fix: keep the database in a shorter folder"} {
		if !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%q lacks %q", errs[0].Error(), want)
		}
	}
}
