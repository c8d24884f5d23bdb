package images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/go-winio"
	"github.com/containerd/containerd"
	"github.com/containerd/containerd/namespaces"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/servertrust"
	"github.com/kubeedge-windows/edgecore/internal/servertrust/servertrusttest"
)

// TestRealContainerdOnWindows imports an image archive, made here, into a
// real containerd.exe of the client's module version (make wine-test
// builds it and sets EDGECORE_CONTAINERD_EXE) through its named pipe, with
// the archive checked by the host's ACLs, and finds the image in the
// k8s.io namespace. The layers are not unpacked: under Wine the windows
// snapshotter cannot apply a layer (Wine has no vmcompute or
// computestorage), so the unpacking is proven on Linux by
// TestRealContainerd.
func TestRealContainerdOnWindows(t *testing.T) {
	exe := os.Getenv("EDGECORE_CONTAINERD_EXE")
	if exe == "" {
		t.Skip("EDGECORE_CONTAINERD_EXE is not set: `make wine-test` builds containerd.exe from the module version of the client and runs this test against it")
	}
	dir := tempDir(t)
	pipe := fmt.Sprintf(`\\.\pipe\edgecore-images-test-%d`, os.Getpid())
	cfg := fmt.Sprintf("version = 2\nroot = %q\nstate = %q\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  address = %q\n",
		filepath.Join(dir, "root"), filepath.Join(dir, "state"), pipe)
	cfgPath := writeFile(t, dir, "config.toml", []byte(cfg))
	pid := startContainerd(t, exe, cfgPath, func() error {
		timeout := time.Second
		c, err := winio.DialPipe(pipe, &timeout)
		if err == nil {
			c.Close()
		}
		return err
	})

	images := tempDir(t)
	const name = "example.invalid/edgecore/tiny:1.0"
	writeFile(t, images, "tiny.tar", ociArchive(t, name, "hello from an air-gapped archive"))
	endpoint := "npipe://./pipe/" + strings.TrimPrefix(pipe, `\\.\pipe\`)
	// Started by hand, containerd is not the containerd service's
	// process, and its pipe has go-winio's default descriptor: the
	// node's own connection refuses it, naming the process.
	_, err := Containerd(endpoint, Snapshotter(config.Windows))(context.Background())
	var refused *servertrust.RefusedError
	if !errors.As(err, &refused) || refused.Facts.Server.PID != pid {
		t.Fatalf("connecting to a containerd started by hand (process %d): %v, want a refusal naming it", pid, err)
	}
	// Under Wine every process runs as one user and containerd cannot
	// run as a service: the test stands in for the service manager.
	trust := servertrusttest.AsService(pid)
	im := &Importer{
		Connect:    containerdWith(endpoint, Snapshotter(config.Windows), trust),
		Trusted:    Access(config.Windows, protect.HostACLs()),
		RecordPath: filepath.Join(tempDir(t), "images-imported.json"),
		WriteFile:  func(p string, data []byte) error { return os.WriteFile(p, data, 0o600) },
		NoUnpack:   true,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	got, err := im.ImportNew(ctx, &out, find(t, images))
	t.Logf("import:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || strings.Join(got[0].Images, ",") != name {
		t.Fatalf("imported %+v, want %s", got, name)
	}
	c, err := containerd.New(pipe)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	list, err := c.ListImages(namespaces.WithNamespace(ctx, Namespace))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, img := range list {
		names = append(names, img.Name())
	}
	if strings.Join(names, ",") != name {
		t.Errorf("k8s.io images: %v, want %s", names, name)
	}
	// The next start: remembered, not imported again.
	got, err = im.ImportNew(ctx, &out, find(t, images))
	if err != nil || len(got) != 1 || !got[0].Skipped {
		t.Errorf("second pass: %+v, %v; want it skipped", got, err)
	}
}
