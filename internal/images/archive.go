// Package images imports image archives (docker save or OCI layout
// tarballs) into containerd's k8s.io namespace, where the kubelet finds
// them, for hosts that reach no registry. The node imports those in the
// release's images folder and in the kubeedge directory's at join and at
// each start, only those it has not imported yet (by the archive's
// SHA-256, kept in a restricted record); `edgecore.exe images import`
// imports one by hand. An archive comes from outside, so it is bounded in
// size, entries and time, and read only when administrators alone may
// change it and its folder.
package images

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// Bounds of an archive. A Windows Server Core image saved with docker
// save, whose layers are stored uncompressed, is about 5 GiB in some 20
// entries; nanoserver and pause are a few hundred MiB. The bounds leave
// room for several images in one archive while one that would fill the
// disk, or hold millions of tiny entries, is refused before containerd is
// sent a byte.
const (
	// MaxArchiveBytes bounds an archive file.
	MaxArchiveBytes = 16 << 30
	// MaxEntries bounds the entries of an archive: docker save writes
	// three or four per layer, an OCI layout one per blob.
	MaxEntries = 10000
	// DefaultTimeout bounds the import of one archive, unpacking
	// included: 16 GiB at the 50 MB/s of a slow disk takes some six
	// minutes, and unpacking as long again.
	DefaultTimeout = 30 * time.Minute
	// maxMetadataBytes bounds manifest.json, oci-layout and index.json,
	// which are a few KiB.
	maxMetadataBytes = 4 << 20
)

// Extension is the file name ending of the archives the folders are
// scanned for: what docker save and ctr export write. Compressed
// tarballs are not read: containerd's importer reads the tar stream as
// it is.
const Extension = ".tar"

// Archive is an image archive on disk.
type Archive struct {
	Path    string
	Size    int64
	ModTime time.Time
}

// Scanned is what a pass over an archive found.
type Scanned struct {
	// Digest is the archive's SHA-256 in lower-case hex.
	Digest string
	// Format is "docker" (docker save) or "oci" (an OCI image layout).
	Format  string
	Entries int
}

// Find lists the archives (*.tar) directly in dirs, in name order per
// folder; a folder that does not exist has none. Other files and
// folders are left alone: the folder may hold a README or the archives'
// checksums.
func Find(dirs []string) ([]Archive, error) {
	var out []Archive
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the image folder %s: %w", dir, err)
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			if !e.Type().IsRegular() || !strings.EqualFold(path.Ext(e.Name()), Extension) {
				continue
			}
			info, err := e.Info()
			if err != nil {
				return nil, fmt.Errorf("reading the image folder %s: %w", dir, err)
			}
			out = append(out, Archive{Path: joinDir(dir, e.Name()), Size: info.Size(), ModTime: info.ModTime()})
		}
	}
	return out, nil
}

// joinDir joins a folder as the caller wrote it (with \ on Windows) and a
// name, keeping the folder's separator.
func joinDir(dir, name string) string {
	if strings.HasSuffix(dir, `\`) || strings.HasSuffix(dir, "/") {
		return dir + name
	}
	if strings.Contains(dir, `\`) {
		return dir + `\` + name
	}
	return dir + "/" + name
}

// Scan reads the archive r of size bytes (named name in errors) once,
// from its start: it hashes every byte, counts the entries and checks
// that it is a docker save or OCI layout tarball within the bounds. It
// reads the metadata files only; layers are hashed, not parsed.
func Scan(name string, r io.Reader, size int64) (Scanned, error) {
	if size > MaxArchiveBytes {
		return Scanned{}, fmt.Errorf("image archive %s: %d bytes is more than the %d (MaxArchiveBytes) an archive may be: split the images into several archives (docker save one image each)",
			name, size, int64(MaxArchiveBytes))
	}
	h := sha256.New()
	// The size read before bounds what is hashed: a file that grows
	// meanwhile is not the one that was measured.
	lr := io.LimitReader(r, size)
	tr := tar.NewReader(io.TeeReader(lr, h))
	var s Scanned
	var layout, manifest, index bool
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Scanned{}, fmt.Errorf("image archive %s: not a readable tar file after %d entries (%v): give a file written by docker save or an OCI image layout tarball, not compressed", name, s.Entries, err)
		}
		if s.Entries++; s.Entries > MaxEntries {
			return Scanned{}, fmt.Errorf("image archive %s holds more than %d entries (MaxEntries), far more than any image has: give a file written by docker save or an OCI image layout tarball", name, MaxEntries)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		switch path.Clean(hdr.Name) {
		case "oci-layout":
			var l struct {
				Version string `json:"imageLayoutVersion"`
			}
			if err := readJSON(tr, hdr.Size, &l); err != nil || l.Version == "" {
				return Scanned{}, fmt.Errorf("image archive %s: its oci-layout file does not name an imageLayoutVersion: the OCI image layout is damaged", name)
			}
			layout = true
		case "index.json":
			index = true
		case "manifest.json":
			var m []struct {
				Config string
			}
			if err := readJSON(tr, hdr.Size, &m); err != nil || len(m) == 0 {
				return Scanned{}, fmt.Errorf("image archive %s: its manifest.json does not list images as docker save writes them (%v): the archive is damaged", name, err)
			}
			manifest = true
		}
	}
	// The tar's end blocks and anything after them count too.
	if _, err := io.Copy(h, lr); err != nil {
		return Scanned{}, fmt.Errorf("image archive %s: reading it: %w", name, err)
	}
	switch {
	case layout && index:
		s.Format = "oci"
	case layout:
		return Scanned{}, fmt.Errorf("image archive %s is an OCI image layout without index.json: the archive is damaged", name)
	case manifest:
		s.Format = "docker"
	default:
		return Scanned{}, fmt.Errorf("image archive %s holds neither manifest.json (docker save) nor oci-layout and index.json (an OCI image layout): give a file written by docker save, ctr images export or an OCI layout tool", name)
	}
	s.Digest = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

func readJSON(r io.Reader, size int64, v any) error {
	if size > maxMetadataBytes {
		return fmt.Errorf("%d bytes is larger than such a file can be", size)
	}
	data, err := io.ReadAll(io.LimitReader(r, maxMetadataBytes))
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
