package logfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// defaultFile is the default log file of each OS as config.Layout has it;
// the options take it from there.
var defaultFile = map[string]string{
	"windows": `C:\var\log\kubeedge\edgecore.log`,
	"linux":   "/var/log/kubeedge/edgecore.log",
}

func TestDefaultOptionsAreValidAndBounded(t *testing.T) {
	for _, goos := range []string{"windows", "linux"} {
		o := DefaultOptions(defaultFile[goos])
		if err := o.Validate(goos); err != nil {
			t.Errorf("%s defaults do not validate: %v", goos, err)
		}
		if o.File != defaultFile[goos] {
			t.Errorf("%s default file = %s", goos, o.File)
		}
		// A bounded number of bounded files.
		if total := o.MaxSizeMB * (1 + o.MaxBackups); o.MaxBackups < 1 || total > 1024 {
			t.Errorf("%s defaults keep up to %d MB in %d backups; want a bounded amount under 1 GB", goos, total, o.MaxBackups)
		}
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	for _, tc := range []struct {
		goos      string
		change    func(*Options)
		wantInErr string
	}{
		{"windows", func(o *Options) { o.MaxSizeMB = 0 }, "--log-max-size must be at least 1"},
		{"windows", func(o *Options) { o.MaxSizeMB = -5 }, "--log-max-size must be at least 1"},
		{"linux", func(o *Options) { o.MaxSizeMB = 1 << 30 }, "--log-max-size must be at least 1 and at most 1048576 (MB)"},
		{"windows", func(o *Options) { o.MaxBackups = 0 }, "--log-max-backups must be at least 1"},
		{"windows", func(o *Options) { o.MaxAgeDays = -1 }, "--log-max-age must be between 0"},
		{"windows", func(o *Options) { o.File = "" }, `--log-file is empty; give a file such as C:\var\log\kubeedge\edgecore.log`},
		{"windows", func(o *Options) { o.File = `logs\edgecore.log` }, "--log-file \"logs\\\\edgecore.log\" is not an absolute path"},
		{"windows", func(o *Options) { o.File = `\var\log\edgecore.log` }, "not an absolute path"},
		{"windows", func(o *Options) { o.File = "/var/log/edgecore.log" }, "not an absolute path"},
		{"windows", func(o *Options) { o.File = `C:\var\log\kubeedge\` }, "names a directory"},
		{"linux", func(o *Options) { o.File = "edgecore.log" }, "--log-file \"edgecore.log\" is not an absolute path; give a full path such as /var/log/kubeedge/edgecore.log"},
		{"linux", func(o *Options) { o.File = `C:\var\log\edgecore.log` }, "not an absolute path"},
		{"linux", func(o *Options) { o.File = "/var/log/" }, "names a directory"},
	} {
		o := DefaultOptions(defaultFile[tc.goos])
		tc.change(&o)
		err := o.Validate(tc.goos)
		if err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
			t.Errorf("%s %+v: Validate() = %v, want an error containing %q", tc.goos, o, err, tc.wantInErr)
		}
	}
	// The example is the host's default, whatever drive it is on; options
	// built without one still name the flag and the rule.
	o := DefaultOptions(`D:\var\log\kubeedge\edgecore.log`)
	o.File = `logs\edgecore.log`
	if err := o.Validate("windows"); err == nil || !strings.Contains(err.Error(), `give a full path such as D:\var\log\kubeedge\edgecore.log`) {
		t.Errorf("Validate() = %v, want the host's default as the example", err)
	}
	o = Options{File: `logs\edgecore.log`, MaxSizeMB: 1, MaxBackups: 1}
	if err := o.Validate("windows"); err == nil || err.Error() != `--log-file "logs\\edgecore.log" is not an absolute path; give a full path` {
		t.Errorf("Validate() without a default = %v", err)
	}
	for _, ok := range []string{`D:\logs\edgecore.log`, `c:/logs/edgecore.log`, `\\fileserver\logs\edgecore.log`} {
		o := DefaultOptions(defaultFile["windows"])
		o.File = ok
		if err := o.Validate("windows"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestFlags(t *testing.T) {
	o := DefaultOptions(defaultFile["windows"])
	fs := pflag.NewFlagSet("edgecore", pflag.ContinueOnError)
	o.AddFlags(fs)
	if fs.Changed(FlagFile) {
		t.Error("--log-file reported as given before parsing")
	}
	err := fs.Parse([]string{`--log-file=D:\logs\edge core.log`, "--log-max-size=10", "--log-max-backups=3", "--log-max-age=7", "--log-compress"})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultOptions(defaultFile["windows"])
	want.File, want.MaxSizeMB, want.MaxBackups, want.MaxAgeDays, want.Compress = `D:\logs\edge core.log`, 10, 3, 7, true
	if o != want {
		t.Errorf("parsed %+v, want %+v", o, want)
	}
	if !fs.Changed(FlagFile) {
		t.Error("--log-file not reported as given")
	}

	o = DefaultOptions(defaultFile["linux"])
	fs = pflag.NewFlagSet("edgecore", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if o != DefaultOptions(defaultFile["linux"]) {
		t.Errorf("without flags the options changed to %+v", o)
	}
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		interactive, service, fileFlag bool
		want                           Destination
	}{
		// As a service there is no console: always the file.
		{false, true, false, File},
		{false, true, true, File},
		{true, true, true, File},
		// In a console the console stays.
		{true, false, false, Console},
		{true, false, true, Both},
		// Redirected output keeps stderr unless a file was asked for.
		{false, false, false, Console},
		{false, false, true, File},
	} {
		if got := Decide(tc.interactive, tc.service, tc.fileFlag); got != tc.want {
			t.Errorf("Decide(interactive=%v, service=%v, --log-file given=%v) = %v, want %v",
				tc.interactive, tc.service, tc.fileFlag, got, tc.want)
		}
	}
}

func TestOpenCreatesTheDirectoryAndAppends(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "var", "log", "kubeedge", "edgecore.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("earlier run\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions(path)
	w, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("this run\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "earlier run\nthis run\n" {
		t.Errorf("log file holds %q, want the earlier run's lines kept and this run's appended", got)
	}

	// A directory that does not exist yet is created.
	o.File = filepath.Join(dir, "new", "dir", "edgecore.log")
	w, err = Open(o)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := os.Stat(o.File); err != nil {
		t.Errorf("Open did not create %s: %v", o.File, err)
	}
}

func TestOpenNamesTheFlagWhenItCannotWrite(t *testing.T) {
	dir := t.TempDir()
	// A file where the directory should be.
	blocker := filepath.Join(dir, "log")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions(filepath.Join(blocker, "edgecore.log"))
	_, err := Open(o)
	if err == nil || !strings.Contains(err.Error(), "--log-file "+o.File) || !strings.Contains(err.Error(), "cannot create the directory") {
		t.Errorf("Open = %v, want an error naming --log-file and the directory", err)
	}

	// The path is a directory.
	o.File = dir
	_, err = Open(o)
	if err == nil || !strings.Contains(err.Error(), "cannot open the file") {
		t.Errorf("Open of a directory = %v, want an error saying the file cannot be opened", err)
	}
}

func TestRotationKeepsABoundedNumberOfFiles(t *testing.T) {
	dir := t.TempDir()
	o := Options{File: filepath.Join(dir, "edgecore.log"), MaxSizeMB: 1, MaxBackups: 2}
	w, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	line := bytes.Repeat([]byte("x"), 1023)
	line = append(line, '\n')
	// 5 MB in 1 KB lines: four rotations at 1 MB.
	for i := 0; i < 5*1024; i++ {
		if _, err := w.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// lumberjack removes old files on a goroutine of its own.
	var names []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		names = names[:0]
		for _, e := range entries {
			names = append(names, e.Name())
			info, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			if info.Size() > 1<<20 {
				t.Errorf("%s is %d bytes, over the 1 MB limit", e.Name(), info.Size())
			}
		}
		if len(names) <= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(names) != 3 {
		t.Errorf("log directory holds %v; want edgecore.log and 2 rotated files", names)
	}
	for _, n := range names {
		if n != "edgecore.log" && !(strings.HasPrefix(n, "edgecore-") && strings.HasSuffix(n, ".log")) {
			t.Errorf("unexpected file %s in the log directory", n)
		}
	}
}
