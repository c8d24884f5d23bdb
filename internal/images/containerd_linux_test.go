package images

import (
	"bytes"
	"context"
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

	containerdconfig "github.com/kubeedge-windows/edgecore/config/containerd"
)

// TestRealContainerd imports a small OCI layout archive and a docker save
// archive, made here, into the containerd daemon the release bundles: make
// containerd-test builds it for Linux at the Makefile's CONTAINERD_VERSION
// and sets EDGECORE_CONTAINERD_BIN; the client is go.mod's (containerd's
// 1.7 Go client, which speaks to a 2.x daemon through its gRPC API). The
// daemon runs as root in a temporary root, state and socket, with the
// config.toml join writes for the bundled containerd
// (config/containerd.Generate, with this host's folders): the images must
// show in the k8s.io namespace and in the CRI plugin's image list, and be
// unpacked into the native snapshotter. Once make containerd-test asks for
// it (the variable set), it fails rather than skips when it cannot run.
func TestRealContainerd(t *testing.T) {
	bin := os.Getenv("EDGECORE_CONTAINERD_BIN")
	if bin == "" {
		t.Skip("EDGECORE_CONTAINERD_BIN is not set: `make containerd-test` builds the containerd the release bundles for Linux and runs this test against it")
	}
	if os.Geteuid() != 0 {
		t.Fatal("containerd's native snapshotter and content store need root (chown of unpacked files): run `make containerd-test` as root, as CI does")
	}
	// A short path: a unix socket's path is at most 107 bytes.
	dir, err := os.MkdirTemp("", "ctrd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "c.sock")
	cfg, err := containerdconfig.Generate(containerdconfig.BundledConfig{
		CNI:          containerdconfig.Dirs{BinDir: filepath.Join(dir, "cni-bin"), ConfDir: filepath.Join(dir, "cni-conf")},
		SandboxImage: "registry.k8s.io/pause:3.10",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := writeFile(t, dir, "config.toml", cfg)
	startContainerd(t, bin, cfgPath, func() error {
		_, err := os.Stat(sock)
		return err
	}, "--root", filepath.Join(dir, "root"), "--state", filepath.Join(dir, "state"), "--address", sock)
	version := containerdVersion(t, sock)
	t.Logf("containerd %s serves at %s", version, sock)

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

// containerdVersion is the daemon's version as its Version API answers:
// the one make containerd-test built, EDGECORE_CONTAINERD_VERSION, which
// it must be.
func containerdVersion(t *testing.T, sock string) string {
	t.Helper()
	c, err := containerd.New(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := c.Version(context.Background())
	if err != nil {
		t.Fatalf("containerd's Version: %v", err)
	}
	if want := os.Getenv("EDGECORE_CONTAINERD_VERSION"); want != "" && v.Version != want {
		t.Fatalf("the daemon is containerd %s, want %s, the release bundle's", v.Version, want)
	}
	return v.Version
}
