package images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/registries"
	"github.com/kubeedge-windows/edgecore/internal/hostfs/hostfstest"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/windows/acl"
)

// fakeRuntime records what the importer asks of containerd.
type fakeRuntime struct {
	images   map[string]bool
	imported [][]byte
	unpacked []string
	// names are what each Import returns, by the archive's content.
	names    map[string][]string
	block    bool // Import waits for the context to end
	connects int
	tagged   []string
}

func newFake() *fakeRuntime {
	return &fakeRuntime{images: map[string]bool{}, names: map[string][]string{}}
}

func (f *fakeRuntime) connect(context.Context) (Runtime, error) {
	f.connects++
	return f, nil
}

func (f *fakeRuntime) Import(ctx context.Context, r io.Reader) ([]string, error) {
	if f.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	f.imported = append(f.imported, data)
	names := f.names[digestOf(data)]
	for _, n := range names {
		f.images[n] = true
	}
	return names, nil
}

func (f *fakeRuntime) Unpack(_ context.Context, name string) error {
	f.unpacked = append(f.unpacked, name)
	return nil
}

func (f *fakeRuntime) Missing(_ context.Context, names []string) ([]string, error) {
	var m []string
	for _, n := range names {
		if !f.images[n] {
			m = append(m, n)
		}
	}
	return m, nil
}

func (f *fakeRuntime) Tag(_ context.Context, name, alias string) error {
	if !f.images[name] {
		return fmt.Errorf("image %q: not found", name)
	}
	f.images[alias] = true
	f.tagged = append(f.tagged, name+" as "+alias)
	return nil
}

func (f *fakeRuntime) Close() error { return nil }

func newImporter(t *testing.T, rt *fakeRuntime) (*Importer, string) {
	t.Helper()
	record := filepath.Join(tempDir(t), "images-imported.json")
	return &Importer{
		Connect:    rt.connect,
		Trusted:    func(string) error { return nil },
		RecordPath: record,
		WriteFile:  func(p string, data []byte) error { return os.WriteFile(p, data, 0o600) },
	}, record
}

func find(t *testing.T, dirs ...string) []Archive {
	t.Helper()
	a, err := Find(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestFindListsTarFilesOnly(t *testing.T) {
	dir := tempDir(t)
	writeFile(t, dir, "b.tar", []byte("x"))
	writeFile(t, dir, "a.TAR", []byte("x"))
	writeFile(t, dir, "README.txt", []byte("x"))
	writeFile(t, dir, "c.tar.gz", []byte("x"))
	if err := os.Mkdir(filepath.Join(dir, "d.tar"), 0o700); err != nil {
		t.Fatal(err)
	}
	got := find(t, dir, filepath.Join(dir, "missing"))
	var names []string
	for _, a := range got {
		names = append(names, filepath.Base(a.Path))
	}
	if strings.Join(names, ",") != "a.TAR,b.tar" {
		t.Errorf("found %v, want a.TAR and b.tar only", names)
	}
}

func TestScanRecognisesBothFormatsAndHashesTheFile(t *testing.T) {
	for name, data := range map[string][]byte{"oci": ociArchive(t, "example.invalid/tiny:1.0", "hi"), "docker": dockerArchive(t, "example.invalid/tiny:1.0")} {
		s, err := Scan(name, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Format != name || s.Digest != digestOf(data) || s.Entries < 3 {
			t.Errorf("%s: scanned %+v, want format %s and the file's sha256 %s", name, s, name, digestOf(data))
		}
	}
}

func TestScanRefusesWhatIsNoImageArchive(t *testing.T) {
	many := make([]blob, MaxEntries+1)
	for i := range many {
		many[i] = blob{Name: fmt.Sprintf("f%d", i)}
	}
	for _, c := range []struct {
		name string
		data []byte
		size int64
		want string
	}{
		{"too big", nil, MaxArchiveBytes + 1, "MaxArchiveBytes"},
		{"not tar", []byte(strings.Repeat("not a tar file ", 100)), 0, "not a readable tar file"},
		{"no metadata", writeTar(t, []blob{{Name: "x", Data: []byte("y")}}), 0, "neither manifest.json"},
		{"layout without index", writeTar(t, []blob{{Name: "oci-layout", Data: []byte(`{"imageLayoutVersion":"1.0.0"}`)}}), 0, "without index.json"},
		{"damaged manifest", writeTar(t, []blob{{Name: "manifest.json", Data: []byte(`{`)}}), 0, "manifest.json does not list"},
		{"too many entries", writeTar(t, many), 0, "MaxEntries"},
	} {
		size := c.size
		if size == 0 {
			size = int64(len(c.data))
		}
		_, err := Scan("x.tar", bytes.NewReader(c.data), size)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "x.tar") {
			t.Errorf("%s: got %v, want an error naming x.tar and %q", c.name, err, c.want)
		}
	}
}

func TestImportNewImportsOnceAndRemembersByDigest(t *testing.T) {
	dir := tempDir(t)
	rt := newFake()
	pause := ociArchive(t, "registry.k8s.io/pause:3.9", "pause")
	app := dockerArchive(t, "example.invalid/app:1")
	rt.names[digestOf(pause)] = []string{"registry.k8s.io/pause:3.9"}
	rt.names[digestOf(app)] = []string{"example.invalid/app:1"}
	writeFile(t, dir, "pause.tar", pause)
	writeFile(t, dir, "app.tar", app)
	im, record := newImporter(t, rt)

	var out bytes.Buffer
	got, err := im.ImportNew(context.Background(), &out, find(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(rt.imported) != 2 || len(got) != 2 || got[0].Skipped || got[1].Skipped {
		t.Fatalf("first pass imported %d archives (%+v), want both", len(rt.imported), got)
	}
	if strings.Join(rt.unpacked, ",") != "example.invalid/app:1,registry.k8s.io/pause:3.9" {
		t.Errorf("unpacked %v, want both images", rt.unpacked)
	}
	rec, err := ReadRecord(record)
	if err != nil || len(rec.Archives) != 2 || rec.Archives[1].Digest != digestOf(pause) {
		t.Fatalf("record %+v (%v), want both archives by digest", rec, err)
	}

	// The next start: nothing new, nothing read or imported.
	out.Reset()
	got, err = im.ImportNew(context.Background(), &out, find(t, dir))
	if err != nil || len(rt.imported) != 2 || !got[0].Skipped || !got[1].Skipped {
		t.Fatalf("second pass: %+v, %v, %d imports; want both skipped", got, err, len(rt.imported))
	}
	if !strings.Contains(out.String(), "imported before") {
		t.Errorf("output %q does not say the archives were imported before", out.String())
	}

	// A copy under another name is the same content.
	writeFile(t, dir, "pause-copy.tar", pause)
	out.Reset()
	got, err = im.ImportNew(context.Background(), &out, find(t, dir))
	if err != nil || len(rt.imported) != 2 {
		t.Fatalf("copy: %+v, %v, %d imports; want none", got, err, len(rt.imported))
	}
	if !strings.Contains(out.String(), "same content") {
		t.Errorf("output %q does not say the copy has the same content", out.String())
	}

	// An image removed from containerd (by the kubelet's garbage
	// collection, or by hand) is imported again.
	delete(rt.images, "example.invalid/app:1")
	if _, err := im.ImportNew(context.Background(), io.Discard, find(t, dir)); err != nil {
		t.Fatal(err)
	}
	if len(rt.imported) != 3 || !bytes.Equal(rt.imported[2], app) {
		t.Errorf("after the image was removed: %d imports, want app.tar again", len(rt.imported))
	}

	// By hand, everything is imported whatever the record says.
	if _, err := im.ImportAll(context.Background(), io.Discard, find(t, dir)); err != nil {
		t.Fatal(err)
	}
	if len(rt.imported) != 6 {
		t.Errorf("ImportAll: %d imports in all, want 6", len(rt.imported))
	}
}

func TestNothingToImportNeverDialsContainerd(t *testing.T) {
	rt := newFake()
	im, _ := newImporter(t, rt)
	got, err := im.ImportNew(context.Background(), io.Discard, find(t, tempDir(t), "/does/not/exist"))
	if err != nil || got != nil || rt.connects != 0 {
		t.Errorf("empty folders: %v, %v, %d connections; want nothing at all", got, err, rt.connects)
	}
}

func TestRefusedArchiveDoesNotStopTheOthers(t *testing.T) {
	dir := tempDir(t)
	rt := newFake()
	good := dockerArchive(t, "example.invalid/good:1")
	rt.names[digestOf(good)] = []string{"example.invalid/good:1"}
	writeFile(t, dir, "bad.tar", dockerArchive(t, "example.invalid/bad:1"))
	writeFile(t, dir, "good.tar", good)
	writeFile(t, dir, "junk.tar", []byte("junk"))
	im, _ := newImporter(t, rt)
	im.Trusted = func(p string) error {
		if filepath.Base(p) == "bad.tar" {
			return errors.New("bad.tar is writable by others")
		}
		return nil
	}
	var out bytes.Buffer
	got, err := im.ImportNew(context.Background(), &out, find(t, dir))
	if err == nil || !strings.Contains(err.Error(), "writable by others") || !strings.Contains(err.Error(), "not a readable tar file") {
		t.Fatalf("error %v, want the refusal and the damaged archive named", err)
	}
	if len(rt.imported) != 1 || got[1].Err != nil || got[1].Images[0] != "example.invalid/good:1" {
		t.Errorf("outcomes %+v: want good.tar imported all the same", got)
	}
	if !strings.Contains(out.String(), "bad.tar: failed") {
		t.Errorf("output %q does not name the refused archive", out.String())
	}
}

func TestArchiveWithoutNamedImageIsAnError(t *testing.T) {
	dir := tempDir(t)
	rt := newFake() // names nothing
	writeFile(t, dir, "anon.tar", ociArchive(t, "example.invalid/x:1", "x"))
	im, record := newImporter(t, rt)
	_, err := im.ImportNew(context.Background(), io.Discard, find(t, dir))
	if err == nil || !strings.Contains(err.Error(), "names no image") || !strings.Contains(err.Error(), "docker save") {
		t.Fatalf("error %v, want one saying the archive names no image and how to save it", err)
	}
	if rec, _ := ReadRecord(record); len(rec.Archives) != 0 {
		t.Errorf("record %+v: a failed archive must not be remembered", rec)
	}
}

func TestImportIsBoundedInTime(t *testing.T) {
	dir := tempDir(t)
	rt := newFake()
	rt.block = true
	writeFile(t, dir, "slow.tar", dockerArchive(t, "example.invalid/slow:1"))
	im, _ := newImporter(t, rt)
	im.Timeout = 50 * time.Millisecond
	_, err := im.ImportNew(context.Background(), io.Discard, find(t, dir))
	if err == nil || !strings.Contains(err.Error(), "not imported within 50ms") || !strings.Contains(err.Error(), "--timeout") {
		t.Errorf("error %v, want the time bound and the fix", err)
	}
}

func TestProgressAndNoUnpack(t *testing.T) {
	dir := tempDir(t)
	rt := newFake()
	data := ociArchive(t, "example.invalid/big:1", strings.Repeat("layer data ", 4096))
	rt.names[digestOf(data)] = []string{"example.invalid/big:1"}
	writeFile(t, dir, "big.tar", data)
	im, _ := newImporter(t, rt)
	im.ProgressStep = int64(len(data) / 4)
	im.NoUnpack = true
	var out bytes.Buffer
	if _, err := im.ImportNew(context.Background(), &out, find(t, dir)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(out.String(), " read (")
	if lines < 3 || !strings.Contains(out.String(), "(25%)") || !strings.Contains(out.String(), "(75%)") {
		t.Errorf("progress %q: want a line each quarter", out.String())
	}
	if len(rt.unpacked) != 0 || strings.Contains(out.String(), "unpacking") {
		t.Errorf("NoUnpack unpacked %v", rt.unpacked)
	}
	// A small archive shows no progress lines.
	out.Reset()
	im.ProgressStep = 0
	if _, err := im.ImportAll(context.Background(), &out, find(t, dir)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), " read (") {
		t.Errorf("small archive printed progress: %q", out.String())
	}
}

func TestDamagedRecordIsReportedWithItsFix(t *testing.T) {
	rt := newFake()
	im, record := newImporter(t, rt)
	os.WriteFile(record, []byte("{"), 0o600)
	dir := tempDir(t)
	writeFile(t, dir, "a.tar", dockerArchive(t, "example.invalid/a:1"))
	_, err := im.ImportNew(context.Background(), io.Discard, find(t, dir))
	if err == nil || !strings.Contains(err.Error(), record) || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("error %v, want the record named with the fix", err)
	}
}

func TestDirsAreTheReleaseFolderAndTheKubeEdgeOne(t *testing.T) {
	l := config.NewLayout(config.Host{GOOS: config.Windows})
	got := Dirs(l, `C:\Program Files\edgecore\edgecore.exe`)
	if strings.Join(got, ";") != `C:\Program Files\edgecore\images;C:\etc\kubeedge\images` {
		t.Errorf("Dirs = %v", got)
	}
	// edgecore.exe kept in C:\etc\kubeedge: one folder, scanned once.
	if got := Dirs(l, `C:\etc\kubeedge\edgecore.exe`); len(got) != 1 {
		t.Errorf("Dirs = %v, want C:\\etc\\kubeedge\\images once", got)
	}
	if got := Dirs(l, ""); len(got) != 1 || got[0] != l.ImagesDir {
		t.Errorf("Dirs without executable = %v", got)
	}
}

// fakeACLs answers protect's questions from a table of SDDL strings.
func fakeACLs(t *testing.T, sddl map[string]string) protect.Host {
	return protect.Host{
		Exists: func(p string) (bool, error) { _, ok := sddl[p]; return ok, nil },
		Read: func(p string) (acl.Security, error) {
			s, ok := sddl[p]
			if !ok {
				return acl.Security{}, os.ErrNotExist
			}
			return acl.ParseSDDL(s)
		},
	}
}

func TestAccessRefusesWhatOthersMayChange(t *testing.T) {
	const admin = "O:BAD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)"
	const usersWrite = "O:BAD:(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1301bf;;;BU)"
	const userOwned = "O:S-1-5-21-1-2-3-1001D:P(A;;FA;;;SY)(A;;FA;;;BA)"
	archive := `D:\edgecore\images\pause.tar`
	for _, c := range []struct {
		name              string
		dir, file, parent string
		want              string
	}{
		{"admin only", admin, admin, admin, ""},
		{"folder writable by Users", usersWrite, admin, admin, `icacls "D:\edgecore\images" /inheritance:d`},
		{"archive writable by Users", admin, usersWrite, admin, `icacls "D:\edgecore\images\pause.tar" /remove:g *S-1-5-32-545`},
		{"archive owned by a user", admin, userOwned, admin, "takeown"},
		{"parent renamable by Users", admin, admin, usersWrite, `icacls "D:\edgecore" /inheritance:d`},
	} {
		h := fakeACLs(t, map[string]string{`D:\edgecore`: c.parent, `D:\edgecore\images`: c.dir, archive: c.file})
		err := Access(config.Windows, h)(archive)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want a refusal with %q", c.name, err, c.want)
		}
	}
	// Outside Windows file modes protect the host.
	if err := Access(config.Linux, protect.Host{})("/opt/edgecore/images/a.tar"); err != nil {
		t.Errorf("Linux: %v", err)
	}
}

// An archive saved from a mirror of the node's registry configuration is
// also tagged with the name pods give it (the registry the mirror serves),
// read from the hosts.toml files join wrote; the record keeps both, so an
// alias removed later brings the archive in again.
func TestImportTagsImagesSavedFromAMirror(t *testing.T) {
	f, err := registries.Parse([]byte(`
mirrors:
  docker.io:
    endpoint: ["https://harbor.example:5000"]
    rewrite: {"^(.*)$": "dockerhub-proxy/$1"}
`), config.Windows)
	if err != nil {
		t.Fatal(err)
	}
	root := `C:\Program Files\containerd\certs.d`
	fsys := hostfstest.New(config.Windows)
	p := registries.NewPlan(f, config.Windows, root)
	for _, h := range p.Hosts {
		fsys.AddFile(h.Path, string(h.Data))
	}
	fsys.AddDir(root + `\_default`) // a folder without hosts.toml

	dir := tempDir(t)
	rt := newFake()
	const saved = "harbor.example:5000/dockerhub-proxy/library/nginx:1.25"
	nginx := dockerArchive(t, saved)
	other := dockerArchive(t, "example.invalid/app:1")
	rt.names[digestOf(nginx)] = []string{saved}
	rt.names[digestOf(other)] = []string{"example.invalid/app:1"}
	writeFile(t, dir, "nginx.tar", nginx)
	writeFile(t, dir, "other.tar", other)
	im, record := newImporter(t, rt)
	im.Aliases = registryAliases(fsys, config.Windows, root)

	var out bytes.Buffer
	got, err := im.ImportNew(context.Background(), &out, find(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rt.tagged, ";") != saved+" as docker.io/library/nginx:1.25" {
		t.Errorf("tagged %v, want the nginx image as docker.io/library/nginx:1.25 only", rt.tagged)
	}
	if strings.Join(got[0].Images, ",") != saved+",docker.io/library/nginx:1.25" {
		t.Errorf("images %v", got[0].Images)
	}
	if !strings.Contains(out.String(), "tagged "+saved+" as docker.io/library/nginx:1.25") {
		t.Errorf("output does not say so:\n%s", out.String())
	}
	rec, err := ReadRecord(record)
	if err != nil || len(rec.Archives) != 2 {
		t.Fatalf("record %+v (%v)", rec, err)
	}
	delete(rt.images, "docker.io/library/nginx:1.25")
	if _, err := im.ImportNew(context.Background(), io.Discard, find(t, dir)); err != nil {
		t.Fatal(err)
	}
	if len(rt.imported) != 3 || !rt.images["docker.io/library/nginx:1.25"] {
		t.Errorf("after the alias was removed: %d imports, alias present %v", len(rt.imported), rt.images["docker.io/library/nginx:1.25"])
	}

	// Without a registry configuration, no alias.
	rt = newFake()
	rt.names[digestOf(nginx)] = []string{saved}
	im, _ = newImporter(t, rt)
	im.Aliases = registryAliases(hostfstest.New(config.Windows), config.Windows, root)
	if _, err := im.ImportNew(context.Background(), io.Discard, find(t, dir)[:1]); err != nil {
		t.Fatal(err)
	}
	if len(rt.tagged) != 0 {
		t.Errorf("tagged %v without a registry configuration", rt.tagged)
	}
}
