package images

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/internal/testdir"
)

// blob is one file of an archive.
type blob struct {
	name string
	data []byte
}

func writeTar(t *testing.T, files []blob) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ociArchive is a minimal OCI image layout tarball of one image, name
// (e.g. example.invalid/tiny:1.0), for the platform of this test binary,
// with one uncompressed layer holding one small file whose content is
// marker: what `ctr images export` or an OCI layout tool writes, made
// here without a registry.
func ociArchive(t *testing.T, name, marker string) []byte {
	t.Helper()
	layer := writeTar(t, []blob{{name: "hello.txt", data: []byte(marker)}})
	layerDigest := "sha256:" + digestOf(layer)
	config := mustJSON(t, map[string]any{
		"architecture": runtime.GOARCH,
		"os":           runtime.GOOS,
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
		"config":       map[string]any{"Cmd": []string{"/hello"}},
	})
	manifest := mustJSON(t, map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + digestOf(config), "size": len(config)},
		"layers":        []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layerDigest, "size": len(layer)}},
	})
	_, tag, _ := cutLast(name, ":")
	index := mustJSON(t, map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.index.v1+json",
		"manifests": []any{map[string]any{
			"mediaType": "application/vnd.oci.image.manifest.v1+json",
			"digest":    "sha256:" + digestOf(manifest), "size": len(manifest),
			"platform":    map[string]string{"os": runtime.GOOS, "architecture": runtime.GOARCH},
			"annotations": map[string]string{"io.containerd.image.name": name, "org.opencontainers.image.ref.name": tag},
		}},
	})
	return writeTar(t, []blob{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{"blobs/sha256/" + digestOf(layer), layer},
		{"blobs/sha256/" + digestOf(config), config},
		{"blobs/sha256/" + digestOf(manifest), manifest},
	})
}

func cutLast(s, sep string) (string, string, bool) {
	i := bytes.LastIndex([]byte(s), []byte(sep))
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// dockerArchive is what docker save writes for one image tagged repoTag.
func dockerArchive(t *testing.T, repoTag string) []byte {
	t.Helper()
	layer := writeTar(t, []blob{{name: "hello.txt", data: []byte(repoTag)}})
	config := mustJSON(t, map[string]any{"architecture": runtime.GOARCH, "os": runtime.GOOS,
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + digestOf(layer)}}})
	return writeTar(t, []blob{
		{digestOf(config) + ".json", config},
		{"abc/layer.tar", layer},
		{"manifest.json", mustJSON(t, []any{map[string]any{"Config": digestOf(config) + ".json", "RepoTags": []string{repoTag}, "Layers": []string{"abc/layer.tar"}}})},
	})
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startContainerd runs the containerd at exe with the configuration file
// cfg until the test ends, and waits up to a minute for ready to succeed;
// its log is shown when the test fails.
func startContainerd(t *testing.T, exe, cfg string, ready func() error) {
	t.Helper()
	var logs bytes.Buffer
	cmd := exec.Command(exe, "--config", cfg)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("containerd's log:\n%s", logs.String())
		}
	})
	for deadline := time.Now().Add(time.Minute); ; {
		err := ready()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd did not answer within a minute: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tempDir is a directory for the test that can also be removed under
// Wine (make wine-test runs this package there too).
func tempDir(t *testing.T) string { return testdir.New(t, "images-test-") }
