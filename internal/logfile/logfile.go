// Package logfile decides where edgecore's logs go and writes them to a
// file rotated by size. A service has no console, so as a Windows service
// edgecore logs to a file; in a console it keeps logging there too, and to
// the file as well when --log-file is given. Rotation is done by
// gopkg.in/natefinch/lumberjack.v2.
package logfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// Flag names, used in the validation errors so that each names the flag to
// fix.
const (
	FlagFile       = "log-file"
	FlagMaxSize    = "log-max-size"
	FlagMaxBackups = "log-max-backups"
	FlagMaxAge     = "log-max-age"
	FlagCompress   = "log-compress"
)

// Options are the log file settings.
type Options struct {
	// File is the log file's path; rotated files sit next to it with a
	// time stamp in the name (edgecore-2025-01-02T03-04-05.000.log).
	File string
	// MaxSizeMB is the size in megabytes at which the file is rotated.
	MaxSizeMB int
	// MaxBackups is how many rotated files are kept.
	MaxBackups int
	// MaxAgeDays removes rotated files older than this many days; 0 keeps
	// them until MaxBackups pushes them out.
	MaxAgeDays int
	// Compress gzips rotated files.
	Compress bool

	// defaultFile is the host's default log file, given to DefaultOptions:
	// the example a refused --log-file is told about.
	defaultFile string
}

// Limits that keep lumberjack's arithmetic (megabytes and days converted
// to bytes and nanoseconds in 64 bits) far from overflowing.
const (
	maxSizeMB     = 1024 * 1024 // 1 TiB
	maxBackups    = 10000
	maxAgeDays    = 100 * 365
	defaultSizeMB = 100
	defaultKeep   = 5
	defaultAge    = 30
)

// DefaultOptions keep at most 600 MB of logs in file, the host's default
// log file (config.Layout.LogFile): the current file of up to 100 MB and
// five rotated ones, each removed after 30 days.
func DefaultOptions(file string) Options {
	return Options{
		File:        file,
		MaxSizeMB:   defaultSizeMB,
		MaxBackups:  defaultKeep,
		MaxAgeDays:  defaultAge,
		defaultFile: file,
	}
}

// AddFlags registers the options on fs, with o's values as defaults.
// Whether --log-file was given is fs.Changed(FlagFile), one of Decide's
// inputs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.File, FlagFile, o.File,
		"Log file. Always used when running as a Windows service; in a console, logs go to the console and, if this flag is given, to the file as well.")
	fs.IntVar(&o.MaxSizeMB, FlagMaxSize, o.MaxSizeMB, "Size in megabytes at which the log file is rotated.")
	fs.IntVar(&o.MaxBackups, FlagMaxBackups, o.MaxBackups, "Number of rotated log files to keep.")
	fs.IntVar(&o.MaxAgeDays, FlagMaxAge, o.MaxAgeDays, "Days after which rotated log files are removed; 0 keeps them until --log-max-backups removes them.")
	fs.BoolVar(&o.Compress, FlagCompress, o.Compress, "Compress rotated log files with gzip.")
}

// Validate checks the options for goos and names the flag to fix.
func (o Options) Validate(goos string) error {
	if err := checkPath(o.File, o.defaultFile, goos); err != nil {
		return err
	}
	if o.MaxSizeMB < 1 || o.MaxSizeMB > maxSizeMB {
		return fmt.Errorf("--%s must be at least 1 and at most %d (MB); got %d", FlagMaxSize, maxSizeMB, o.MaxSizeMB)
	}
	// lumberjack reads 0 backups as "keep every file", which would let
	// the logs fill the disk.
	if o.MaxBackups < 1 || o.MaxBackups > maxBackups {
		return fmt.Errorf("--%s must be at least 1 and at most %d; got %d", FlagMaxBackups, maxBackups, o.MaxBackups)
	}
	if o.MaxAgeDays < 0 || o.MaxAgeDays > maxAgeDays {
		return fmt.Errorf("--%s must be between 0 (no age limit) and %d (days); got %d", FlagMaxAge, maxAgeDays, o.MaxAgeDays)
	}
	return nil
}

// checkPath requires an absolute file path: a service starts in
// C:\Windows\System32, where a relative path would put the log. example,
// when known, is the path the errors suggest.
func checkPath(p, example, goos string) error {
	such := ""
	if example != "" {
		such = " such as " + example
	}
	switch {
	case strings.TrimSpace(p) == "":
		return fmt.Errorf("--%s is empty; give a file%s", FlagFile, such)
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("--%s %q contains a NUL character", FlagFile, p)
	case !ospath.IsAbs(goos, p):
		return fmt.Errorf("--%s %q is not an absolute path; give a full path%s", FlagFile, p, such)
	case ospath.IsSeparator(goos, p[len(p)-1]):
		return fmt.Errorf("--%s %q names a directory; give a file%s", FlagFile, p, such)
	}
	return nil
}

// Open returns a writer to the log file, rotated by size. It creates the
// directory and opens the file once up front, so that a path edgecore
// cannot write is reported at start-up with the flag to change rather than
// lost with the first log line. Lines the file refuses later (a full
// volume) are counted, and the first line written after them says how
// many were lost (keeper). Call Validate first.
func Open(o Options) (io.WriteCloser, error) {
	dir := filepath.Dir(o.File)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--%s %s: cannot create the directory: %w", FlagFile, o.File, err)
	}
	f, err := os.OpenFile(o.File, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--%s %s: cannot open the file for writing: %w", FlagFile, o.File, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("--%s %s: %w", FlagFile, o.File, err)
	}
	return newKeeper(&lumberjack.Logger{
		Filename:   o.File,
		MaxSize:    o.MaxSizeMB,
		MaxBackups: o.MaxBackups,
		MaxAge:     o.MaxAgeDays,
		Compress:   o.Compress,
		// Rotated files are named in local time, as an operator reading
		// them on the host expects.
		LocalTime: true,
	}, time.Now), nil
}

// Destination is where the logs go.
type Destination int

const (
	Console Destination = iota + 1
	File
	Both
)

func (d Destination) String() string {
	switch d {
	case Console:
		return "console"
	case File:
		return "file"
	case Both:
		return "console and file"
	}
	return fmt.Sprintf("destination(%d)", int(d))
}

// UsesFile reports whether logs go to the file.
func (d Destination) UsesFile() bool { return d == File || d == Both }

// Decide says where the logs go. interactive is whether the process has a
// console a person watches (stderr is a terminal); service is whether the
// service manager started it; fileFlagSet is whether --log-file was given.
//
//   - As a service there is no console, so the file, always.
//   - In a console the console stays, with the file as well if asked for.
//   - Without a terminal (output redirected, run by a scheduler or a test)
//     the output stays on stderr for whoever captures it, unless a file
//     was asked for, which then replaces it.
func Decide(interactive, service, fileFlagSet bool) Destination {
	switch {
	case service:
		return File
	case !fileFlagSet:
		return Console
	case interactive:
		return Both
	}
	return File
}
