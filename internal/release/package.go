package release

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubeedge-windows/edgecore/windows/durable"
)

// Bounds of a release zip. edgecore.exe is about 60 MiB and the zip holds
// it with a few small files; the bounds leave room for growth while a
// package that would fill the disk (a 2 GiB entry, a zip bomb) is refused
// from its directory, before anything is read or written.
const (
	// MaxPackageBytes bounds the zip file itself, and what a download of
	// one may write.
	MaxPackageBytes = 512 << 20
	// MaxEntryBytes bounds each file in the zip, uncompressed.
	MaxEntryBytes = 256 << 20
	// MaxTotalBytes bounds all files in the zip together, uncompressed.
	MaxTotalBytes = 512 << 20
	// MaxEntries bounds the number of entries in the zip. build/package.sh
	// puts in seven files of its own and at most two (a license and a
	// NOTICE) per Go module compiled into edgecore.exe: about 160 modules,
	// so at most some 330 entries. Six times that leaves room for the
	// dependencies to grow, while a zip of millions of tiny entries, each
	// of which would be hashed, is refused from its directory.
	MaxEntries = 2000
)

// Package is a release zip whose every file matched SHA256SUMS and whose
// manifest agrees with its directory name. Close it when done.
type Package struct {
	// Path is the zip as given.
	Path     string
	Manifest Manifest
	// Files are the package's files (relative to the top directory) with
	// their SHA-256 in lower-case hex, as SHA256SUMS lists them.
	Files map[string]string
	zr    *zip.Reader
	file  *os.File
	entry map[string]*zip.File
}

// Open reads the zip at path and checks it: one top directory named
// edgecore-<version>-<os>-<arch>, no entry that could land outside it, a
// SHA256SUMS that lists every other file with its checksum, each file
// matching it, and a manifest.json that agrees with the directory name and
// names a binary the package holds.
func Open(path string) (*Package, error) {
	return OpenDigest(path, "")
}

// OpenDigest is Open that first checks the whole zip's SHA-256 against
// want (lower-case hex; "" checks none), hashing and then reading it
// through one handle: a file reopened by name after the check could be
// another file by then.
func OpenDigest(path, want string) (*Package, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("package %s does not exist: give the path of the edgecore-<version>-windows-amd64.zip `make package` builds", path)
	}
	if err != nil {
		return nil, fmt.Errorf("package %s: %w", path, err)
	}
	p, err := openFile(path, f, want)
	if err != nil {
		f.Close()
		return nil, err
	}
	return p, nil
}

func openFile(path string, f *os.File, want string) (*Package, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("package %s: %w", path, err)
	}
	if info.Size() > MaxPackageBytes {
		return nil, fmt.Errorf("package %s: %d bytes is more than the %d a release zip may be: give the edgecore-<version>-windows-amd64.zip `make package` builds", path, info.Size(), MaxPackageBytes)
	}
	if want != "" {
		h := sha256.New()
		// The size read from the handle bounds the hash: a file that
		// grows meanwhile is not the one that was measured.
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, info.Size())); err != nil {
			return nil, fmt.Errorf("package %s: reading it: %w", path, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			return nil, &DigestError{Path: path, Got: got, Want: want}
		}
	}
	zr, err := zip.NewReader(f, info.Size())
	if err != nil {
		return nil, fmt.Errorf("package %s: cannot read it as a zip (%v): give the edgecore-<version>-windows-amd64.zip `make package` builds", path, err)
	}
	p := &Package{Path: path, zr: zr, file: f}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("package %s: %w", path, err)
	}
	return p, nil
}

// DigestError is a zip whose SHA-256 is not the one expected.
type DigestError struct{ Path, Got, Want string }

func (e *DigestError) Error() string {
	return fmt.Sprintf("package %s has the SHA-256 %s, not the expected %s: it is damaged or not the package meant; fetch it again", e.Path, e.Got, e.Want)
}

// Close releases the zip.
func (p *Package) Close() error { return p.file.Close() }

func (p *Package) check() error {
	top, entries, err := topDir(p.zr.File)
	if err != nil {
		return err
	}
	p.entry = entries
	sumsEntry, ok := entries[SumsFile]
	if !ok {
		return fmt.Errorf("it has no %s/%s, so its files cannot be checked: use a package made by build/package.sh", top, SumsFile)
	}
	sumsData, err := readEntry(sumsEntry, 1<<20)
	if err != nil {
		return fmt.Errorf("%s: %w", SumsFile, err)
	}
	sums, err := ParseSums(sumsData)
	if err != nil {
		return err
	}
	var unlisted []string
	for name := range entries {
		if name != SumsFile && sums[name] == "" {
			unlisted = append(unlisted, name)
		}
	}
	sort.Strings(unlisted)
	if len(unlisted) > 0 {
		return fmt.Errorf("%s does not list %s: the package was changed after it was built", SumsFile, strings.Join(unlisted, ", "))
	}
	names := make([]string, 0, len(sums))
	for name := range sums {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		e, ok := entries[name]
		if !ok {
			return fmt.Errorf("%s lists %s, which the package does not hold: the package is incomplete", SumsFile, name)
		}
		got, err := hashEntry(e)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if got != sums[name] {
			return fmt.Errorf("%s does not match %s (the package is damaged or was changed): fetch it again", name, SumsFile)
		}
	}
	p.Files = sums
	mEntry, ok := entries[ManifestFile]
	if !ok {
		return fmt.Errorf("it has no %s/%s, which says its version and platform: use a package made by build/package.sh of this or a later release", top, ManifestFile)
	}
	data, err := readEntry(mEntry, 1<<16)
	if err != nil {
		return fmt.Errorf("%s: %w", ManifestFile, err)
	}
	m, err := parseManifest(data)
	if err != nil {
		return err
	}
	if m.TopDir() != top {
		return fmt.Errorf("%s says %s %s for %s, but the package's directory is %s: the package was assembled by hand", ManifestFile, m.Name, m.Version, m.Platform(), top)
	}
	if _, ok := entries[m.Binary]; !ok {
		return fmt.Errorf("%s names the binary %s, which the package does not hold", ManifestFile, m.Binary)
	}
	p.Manifest = m
	return nil
}

// topDir checks that every entry lies in one top directory, with no
// absolute path, backslash or ".." that could place a file elsewhere when
// extracted, and within the size bounds, and returns the top directory and
// the files by their name below it. The sizes are those the zip's
// directory declares; the zip reader fails an entry that holds more.
func topDir(files []*zip.File) (string, map[string]*zip.File, error) {
	if len(files) > MaxEntries {
		return "", nil, fmt.Errorf("it holds %d entries, more than the %d (MaxEntries) a release package may hold: build/package.sh puts in a few hundred; give the edgecore-<version>-windows-amd64.zip `make package` builds",
			len(files), MaxEntries)
	}
	entries := map[string]*zip.File{}
	top := ""
	var total uint64
	for _, f := range files {
		name := f.Name
		if f.UncompressedSize64 > MaxEntryBytes {
			return "", nil, fmt.Errorf("entry %q is %d bytes uncompressed, more than the %d a release file may be: refusing a package that could fill the disk", name, f.UncompressedSize64, MaxEntryBytes)
		}
		if total += f.UncompressedSize64; total > MaxTotalBytes {
			return "", nil, fmt.Errorf("the entries up to %q are more than %d bytes uncompressed together: refusing a package that could fill the disk", name, MaxTotalBytes)
		}
		if strings.ContainsRune(name, '\\') || strings.HasPrefix(name, "/") || strings.Contains(name, ":") {
			return "", nil, fmt.Errorf("entry %q is not a relative path with forward slashes: refusing a package that could write outside its directory", name)
		}
		parts := strings.Split(strings.TrimSuffix(name, "/"), "/")
		for _, part := range parts {
			if part == ".." || part == "." || part == "" {
				return "", nil, fmt.Errorf("entry %q has an empty, . or .. element: refusing a package that could write outside its directory", name)
			}
		}
		if top == "" {
			top = parts[0]
		}
		if parts[0] != top {
			return "", nil, fmt.Errorf("entries lie in both %s/ and %s/: a package has one top directory", top, parts[0])
		}
		if strings.HasSuffix(name, "/") || f.FileInfo().IsDir() {
			continue
		}
		if len(parts) < 2 {
			return "", nil, fmt.Errorf("entry %q lies outside the package's top directory", name)
		}
		rel := strings.Join(parts[1:], "/")
		if _, dup := entries[rel]; dup {
			return "", nil, fmt.Errorf("entry %q appears twice", name)
		}
		entries[rel] = f
	}
	if top == "" {
		return "", nil, errors.New("the zip is empty")
	}
	return top, entries, nil
}

// ParseSums reads sha256sum output: "<64 hex digits>  <name>" a line (a
// '*' before the name marks binary mode and is dropped). It returns the
// checksums in lower case by name.
func ParseSums(data []byte) (map[string]string, error) {
	sums := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, " ")
		name = strings.TrimPrefix(strings.TrimPrefix(name, " "), "*")
		if !ok || name == "" || !isSHA256(sum) {
			return nil, fmt.Errorf("%s line %d (%q) is not \"<sha256>  <file>\" as sha256sum writes it", SumsFile, i+1, line)
		}
		if _, dup := sums[name]; dup {
			return nil, fmt.Errorf("%s lists %s twice", SumsFile, name)
		}
		sums[name] = strings.ToLower(sum)
	}
	if len(sums) == 0 {
		return nil, fmt.Errorf("%s is empty", SumsFile)
	}
	return sums, nil
}

func isSHA256(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func readEntry(f *zip.File, limit int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(limit) {
		return nil, fmt.Errorf("%d bytes is larger than such a file can be", f.UncompressedSize64)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, limit))
}

// hashEntry reads the whole entry, which also makes the zip reader check
// its CRC.
func hashEntry(f *zip.File) (string, error) {
	rc, err := f.Open()
	if err != nil {
		return "", err
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := copyAtMost(h, rc, MaxEntryBytes); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// copyAtMost copies r to w and fails once more than limit bytes come:
// the bound holds even when a reader does not check the size it
// declared.
func copyAtMost(w io.Writer, r io.Reader, limit int64) (int64, error) {
	n, err := io.Copy(w, io.LimitReader(r, limit+1))
	if err == nil && n > limit {
		err = fmt.Errorf("more than %d bytes: refusing what could fill the disk", limit)
	}
	return n, err
}

// Extract writes the package's file name to dst, checking its SHA-256
// again while writing, since the zip could change between Open and now.
// dst is written beside itself first, flushed to disk and then renamed
// with the rename written through (durable.Rename), so that a power cut
// never leaves half a binary under its name, nor the staging record that
// follows on disk without the binary it names.
func (p *Package) Extract(name, dst string) error {
	e, ok := p.entry[name]
	if !ok {
		return fmt.Errorf("package %s holds no %s", p.Path, name)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return err
	}
	rc, err := e.Open()
	if err != nil {
		return fmt.Errorf("package %s: %s: %w", p.Path, name, err)
	}
	defer rc.Close()
	tmp := dst + ".part"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = copyAtMost(io.MultiWriter(out, h), rc, MaxEntryBytes)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && hex.EncodeToString(h.Sum(nil)) != p.Files[name] {
		err = fmt.Errorf("%s changed while it was extracted from %s: fetch the package again", name, p.Path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return durable.Rename(tmp, dst)
}

// FileSHA256 is the SHA-256 of the file at path in lower-case hex.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
