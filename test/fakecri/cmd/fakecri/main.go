// Command fakecri serves a fake CRI v1 container runtime (see package
// fakecri) until it is interrupted. On Windows it takes containerd's place
// on npipe://./pipe/containerd-containerd by default.
//
//	fakecri [--endpoint npipe://./pipe/NAME|tcp://127.0.0.1:PORT|unix:///PATH]
//	        [--image NAME]... [--image-size BYTES] [--image-fs-dir DIR] [--pod-cidr CIDR]
//	        [--fail-pull IMAGE]... [--registry-auth HOST=USER:PASSWORD]... [--v]
//	        [--pipe-sddl SDDL] [--state-file PATH]
//
// Its pipe is administrators-only (fakecri.PipeSDDL) unless --pipe-sddl
// says otherwise: --pipe-sddl "" serves it as any user's program would,
// which the node refuses to talk to.
//
// With -v it logs every CRI call, and each container stop, how a stop that
// took time ended, each ExecSync and each image pull (with the user of its
// credentials) as "action: " and the action (fakecri.Action), and each call
// on a pod's sandbox or container as "pod call: " and the call
// (fakecri.PodCall).
//
// With --state-file it keeps the runtime's sandboxes and containers in that
// file as JSON (fakecri.State), rewritten after each call that changed them.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/kubeedge-windows/edgecore/test/fakecri"
)

type images []string

func (i *images) String() string     { return strings.Join(*i, ",") }
func (i *images) Set(v string) error { *i = append(*i, v); return nil }

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("fakecri: ")
	defaultEndpoint := ""
	if runtime.GOOS == "windows" {
		defaultEndpoint = fakecri.DefaultEndpoint
	}
	var opts fakecri.Options
	var imgs images
	endpoint := flag.String("endpoint", defaultEndpoint, "where to serve: npipe://./pipe/NAME (Windows), tcp://HOST:PORT or unix:///PATH")
	flag.Var(&imgs, "image", "an image present from the start (repeatable)")
	var failPulls images
	flag.Var(&failPulls, "fail-pull", "an image reference whose pull fails with NotFound (repeatable)")
	var auths images
	flag.Var(&auths, "registry-auth", "HOST=USER:PASSWORD: the registry's images pull only with these credentials (repeatable)")
	flag.Uint64Var(&opts.ImageSize, "image-size", fakecri.DefaultImageSize, "size in bytes reported for every image; must not be 0")
	flag.StringVar(&opts.ImageFsDir, "image-fs-dir", filepath.Join(os.TempDir(), "fakecri"), "directory reported as the image file system")
	flag.StringVar(&opts.PodCIDR, "pod-cidr", fakecri.DefaultPodCIDR, "range pod sandbox IPs are taken from")
	flag.StringVar(&opts.StateFile, "state-file", "", "keep the runtime's sandboxes and containers in this file as JSON, rewritten after each change")
	verbose := flag.Bool("v", false, "log every CRI call")
	pipeSDDL := flag.String("pipe-sddl", fakecri.PipeSDDL, "security descriptor of the named pipe; the default is an administrators-only pipe, which the node trusts as an operator's runtime; \"\" gives go-winio's default, the pipe of any user's program, which the node refuses")
	flag.Parse()
	if flag.NArg() != 0 {
		fail("unexpected arguments %q", flag.Args())
	}
	if *endpoint == "" {
		fail("--endpoint is required outside Windows")
	}
	if opts.ImageSize == 0 {
		fail("--image-size 0: the kubelet refuses images without a size")
	}
	opts.Images = imgs
	opts.FailPulls = failPulls
	for _, a := range auths {
		host, cred, ok := strings.Cut(a, "=")
		user, password, ok2 := strings.Cut(cred, ":")
		if !ok || !ok2 || host == "" || user == "" {
			fail("--registry-auth %q: want HOST=USER:PASSWORD", a)
		}
		if opts.Registries == nil {
			opts.Registries = map[string]fakecri.Credential{}
		}
		opts.Registries[host] = fakecri.Credential{Username: user, Password: password}
	}
	if *verbose {
		opts.CallLog = func(method string, err error) {
			if err != nil {
				log.Printf("%s: %v", method, err)
				return
			}
			log.Print(method)
		}
		// Tests read these lines back: which container was stopped with
		// which grace period, how long it took, what ran in it, and which
		// images were pulled with whose credentials, in order.
		opts.Actions = func(a fakecri.Action) { log.Printf("action: %s", a) }
		// And which pod each sandbox and container call was about: what
		// the kubelet created, started and looked at, and when.
		opts.PodCalls = func(c fakecri.PodCall) { log.Printf("pod call: %s", c) }
	}

	srv, err := fakecri.New(opts)
	if err != nil {
		fail("%v", err)
	}
	l, err := fakecri.ListenWith(*endpoint, *pipeSDDL)
	if err != nil {
		fail("%v", err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		log.Printf("%v: stopping", s)
		srv.Stop()
	}()
	// Tests wait for this line before starting a kubelet; the process id
	// is the one the node names when it refuses a server.
	log.Printf("serving CRI v1 on %s (process %d)", *endpoint, os.Getpid())
	if err := srv.Serve(l); err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fakecri: "+format+"\n", args...)
	os.Exit(2)
}
