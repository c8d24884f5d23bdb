// Package imagetest makes image archives for tests, as `docker save` and
// OCI layout tools write them, without a registry or a container engine:
// the importer's unit tests, the tests against a real containerd, and the
// e2e journey import the same files. StartContainerd runs the real
// containerd those tests import into or pull with.
package imagetest

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// Platform is the os and architecture an image is built for; containerd
// imports (and the kubelet runs) only those of its own host.
type Platform struct{ OS, Arch string }

// Blob is one file of an archive.
type Blob struct {
	Name string
	Data []byte
}

// Tar is a tarball of files, in order.
func Tar(t testing.TB, files []Blob) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.Name, Mode: 0o644, Size: int64(len(f.Data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Digest is the SHA-256 of b in lower-case hex, as blobs are named.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// OCIArchive is a minimal OCI image layout tarball of one image, name
// (e.g. example.invalid/tiny:1.0), for p, with one uncompressed layer
// holding one small file whose content is marker: what `ctr images
// export` or an OCI layout tool writes.
func OCIArchive(t testing.TB, name, marker string, p Platform) []byte {
	t.Helper()
	layer := Tar(t, []Blob{{Name: "hello.txt", Data: []byte(marker)}})
	layerDigest := "sha256:" + Digest(layer)
	config := mustJSON(t, map[string]any{
		"architecture": p.Arch,
		"os":           p.OS,
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
		"config":       map[string]any{"Cmd": []string{"/hello"}},
	})
	manifest := mustJSON(t, map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + Digest(config), "size": len(config)},
		"layers":        []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layerDigest, "size": len(layer)}},
	})
	tag := name[strings.LastIndex(name, ":")+1:]
	index := mustJSON(t, map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.index.v1+json",
		"manifests": []any{map[string]any{
			"mediaType":   "application/vnd.oci.image.manifest.v1+json",
			"digest":      "sha256:" + Digest(manifest),
			"size":        len(manifest),
			"platform":    map[string]string{"os": p.OS, "architecture": p.Arch},
			"annotations": map[string]string{"io.containerd.image.name": name, "org.opencontainers.image.ref.name": tag},
		}},
	})
	return Tar(t, []Blob{
		{Name: "oci-layout", Data: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{Name: "index.json", Data: index},
		{Name: "blobs/sha256/" + Digest(layer), Data: layer},
		{Name: "blobs/sha256/" + Digest(config), Data: config},
		{Name: "blobs/sha256/" + Digest(manifest), Data: manifest},
	})
}

// DockerArchive is what docker save writes for one image tagged repoTag.
func DockerArchive(t testing.TB, repoTag string, p Platform) []byte {
	t.Helper()
	layer := Tar(t, []Blob{{Name: "hello.txt", Data: []byte(repoTag)}})
	config := mustJSON(t, map[string]any{"architecture": p.Arch, "os": p.OS,
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + Digest(layer)}}})
	return Tar(t, []Blob{
		{Name: Digest(config) + ".json", Data: config},
		{Name: "abc/layer.tar", Data: layer},
		{Name: "manifest.json", Data: mustJSON(t, []any{map[string]any{"Config": Digest(config) + ".json", "RepoTags": []string{repoTag}, "Layers": []string{"abc/layer.tar"}}})},
	})
}
