package images

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd"
	"github.com/containerd/containerd/namespaces"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestRealContainerd imports a small OCI layout archive, made here, into a
// real containerd built from the module version this client is (make
// containerd-test builds it and sets EDGECORE_CONTAINERD_BIN), running as
// root in a temporary root, state and socket with the native snapshotter:
// the image must show in the k8s.io namespace and in the CRI plugin's
// image list, and be unpacked.
func TestRealContainerd(t *testing.T) {
	bin := os.Getenv("EDGECORE_CONTAINERD_BIN")
	if bin == "" {
		t.Skip("EDGECORE_CONTAINERD_BIN is not set: `make containerd-test` builds containerd from the module version of the client and runs this test against it")
	}
	if os.Geteuid() != 0 {
		t.Skip("containerd's native snapshotter and content store need root (chown of unpacked files): run as root, as make containerd-test does in CI")
	}
	// A short path: a unix socket's path is at most 107 bytes.
	dir, err := os.MkdirTemp("", "ctrd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "c.sock")
	cfg := fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[ttrpc]
  address = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.9"
[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "native"
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = %q
  conf_dir = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock, sock+".ttrpc", filepath.Join(dir, "cni-bin"), filepath.Join(dir, "cni-conf"))
	cfgPath := writeFile(t, dir, "config.toml", []byte(cfg))
	startContainerd(t, bin, cfgPath, func() error {
		_, err := os.Stat(sock)
		return err
	})

	images := tempDir(t)
	const name = "example.invalid/edgecore/tiny:1.0"
	writeFile(t, images, "tiny.tar", ociArchive(t, name, "hello from an air-gapped archive"))
	// And what docker save writes.
	const saved = "example.invalid/edgecore/saved:2"
	writeFile(t, images, "saved.tar", dockerArchive(t, saved))
	endpoint := "unix://" + sock
	im := &Importer{
		Connect:    Containerd(endpoint, "native"),
		Trusted:    func(string) error { return nil },
		RecordPath: filepath.Join(tempDir(t), "images-imported.json"),
		WriteFile:  func(p string, data []byte) error { return os.WriteFile(p, data, 0o600) },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	got, err := im.ImportNew(ctx, &out, find(t, images))
	t.Logf("import:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || strings.Join(got[0].Images, ",") != saved || strings.Join(got[1].Images, ",") != name {
		t.Fatalf("imported %+v, want %s and %s", got, saved, name)
	}

	// What ctr -n k8s.io images ls shows, and that it is unpacked.
	c, err := containerd.New(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nsCtx := namespaces.WithNamespace(ctx, Namespace)
	list, err := c.ListImages(nsCtx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, img := range list {
		// The CRI plugin adds a reference by image ID of its own.
		if !strings.HasPrefix(img.Name(), "sha256:") {
			names = append(names, img.Name())
		}
	}
	if strings.Join(names, ",") != saved+","+name {
		t.Errorf("k8s.io images: %v, want %s and %s", names, name, saved)
	}
	img, err := c.GetImage(nsCtx, name)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := img.IsUnpacked(nsCtx, "native"); err != nil || !ok {
		t.Errorf("unpacked in native: %v, %v", ok, err)
	}
	if ns, _ := c.NamespaceService().List(ctx); strings.Join(ns, ",") != Namespace {
		t.Errorf("namespaces %v: the image must land in k8s.io only", ns)
	}

	// What the kubelet sees: the CRI plugin's image list.
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var criNames []string
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := runtimeapi.NewImageServiceClient(conn).ListImages(ctx, &runtimeapi.ListImagesRequest{})
		if err != nil {
			t.Fatalf("CRI ListImages: %v", err)
		}
		criNames = nil
		for _, i := range resp.Images {
			criNames = append(criNames, i.RepoTags...)
		}
		// The CRI plugin learns of images from containerd's events.
		sort.Strings(criNames)
		if strings.Join(criNames, ",") == saved+","+name || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Join(criNames, ",") != saved+","+name {
		t.Errorf("CRI ListImages: %v, want %s and %s", criNames, saved, name)
	}

	// The next start: remembered, not imported again.
	out.Reset()
	got, err = im.ImportNew(ctx, &out, find(t, images))
	if err != nil || len(got) != 2 || !got[0].Skipped || !got[1].Skipped {
		t.Errorf("second pass: %+v, %v; want it skipped\n%s", got, err, out.String())
	}
	// Removed from containerd: imported again.
	if err := c.ImageService().Delete(nsCtx, name); err != nil {
		t.Fatal(err)
	}
	got, err = im.ImportNew(ctx, &out, find(t, images))
	if err != nil || len(got) != 2 || !got[0].Skipped || got[1].Skipped {
		t.Errorf("after removal: %+v, %v; want it imported again", got, err)
	}
	if _, err := c.GetImage(nsCtx, name); err != nil {
		t.Errorf("after the second import: %v", err)
	}

	// An image saved from a mirror of the node's registry configuration
	// gets the name pods give it (Importer.Aliases): the kubelet, through
	// the CRI, finds it under that name, the same image.
	const alias = "registry.invalid/edgecore/saved:2"
	im.Aliases = func(n string) []string {
		if n == saved {
			return []string{alias}
		}
		return nil
	}
	out.Reset()
	if _, err := im.ImportAll(ctx, &out, find(t, images)); err != nil {
		t.Fatalf("import with an alias: %v\n%s", err, out.String())
	}
	cri := runtimeapi.NewImageServiceClient(conn)
	want, err := cri.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: saved}})
	if err != nil || want.Image == nil {
		t.Fatalf("CRI ImageStatus %s: %+v, %v", saved, want, err)
	}
	var st *runtimeapi.ImageStatusResponse
	for deadline := time.Now().Add(10 * time.Second); ; {
		st, err = cri.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: alias}})
		if err != nil || (st.Image != nil && st.Image.Id == want.Image.Id) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || st.Image == nil || st.Image.Id != want.Image.Id {
		t.Errorf("CRI ImageStatus %s: %+v, %v; want the image %s\n%s", alias, st, err, want.Image.Id, out.String())
	}
}
