//go:build windows

// Command dmiclient is a device mapper's side of edgecore's DMI named pipe,
// for test/wine: it runs under Wine next to edgecore.exe.
//
//	dmiclient register PIPE NAME   registers mapper NAME over gRPC and prints
//	                               "registered NAME", then registers one
//	                               without a protocol and prints the edge's
//	                               refusal: "refused: <message>"
//	dmiclient nonadmin PIPE        opens the pipe with Administrators
//	                               disabled in the thread's token, then with
//	                               the process's own token; prints
//	                               "restricted: <result>" and "own: <result>",
//	                               and how the restricted token fares with
//	                               an event only Administrators may open
//	dmiclient acl PIPE             prints the pipe's DACL as SDDL: "dacl: D:..."
//
// Exit code 0 when every call answered as printed, 1 otherwise.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"time"
	"unsafe"

	"github.com/Microsoft/go-winio"
	pb "github.com/kubeedge/api/apis/dmi/v1beta1"
	"golang.org/x/sys/windows"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: dmiclient register PIPE NAME | nonadmin PIPE")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "register":
		if len(os.Args) != 4 {
			os.Exit(2)
		}
		err = register(os.Args[2], os.Args[3])
	case "nonadmin":
		err = nonAdmin(os.Args[2])
	case "acl":
		err = printDACL(os.Args[2])
	default:
		os.Exit(2)
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
}

// register makes the calls a mapper makes at start: MapperRegister, here
// without devices (WithData false), which the edge answers after storing
// the mapper in its database.
func register(pipe, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	usePlaceholder(pipe)
	conn, err := grpc.NewClient("passthrough:///"+pipe,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return winio.DialPipeContext(ctx, addr)
		}))
	if err != nil {
		return err
	}
	defer conn.Close()
	client := pb.NewDeviceManagerServiceClient(conn)
	mapper := &pb.MapperInfo{Name: name, Version: "v1.0.0", ApiVersion: "v1beta1", Protocol: "wine-test", Address: []byte(`npipe://./pipe/` + name), State: "OK"}
	if _, err := client.MapperRegister(ctx, &pb.MapperRegisterRequest{WithData: false, Mapper: mapper}); err != nil {
		return fmt.Errorf("MapperRegister %s: %w", name, err)
	}
	fmt.Println("registered", name)
	// The edge's own rule, not gRPC's: a mapper must name its protocol.
	bad := &pb.MapperInfo{Name: name + "-no-protocol"}
	_, err = client.MapperRegister(ctx, &pb.MapperRegisterRequest{Mapper: bad})
	if err == nil {
		return fmt.Errorf("MapperRegister without a protocol was accepted")
	}
	fmt.Println("refused:", err)
	return nil
}

var (
	advapi32              = windows.NewLazySystemDLL("advapi32.dll")
	procCreateRestricted  = advapi32.NewProc("CreateRestrictedToken")
	administratorsSIDText = "S-1-5-32-544"
)

// nonAdmin opens the pipe as an account outside Administrators would: the
// process's token with BUILTIN\Administrators made deny-only, impersonated
// on this thread. Then it opens the pipe again as itself, so that a refusal
// is shown to come from the token and not from the pipe being gone.
func nonAdmin(pipe string) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	usePlaceholder(pipe)
	var self windows.Token
	if err := windows.OpenProcessToken(windows.CurrentProcess(), windows.TOKEN_DUPLICATE|windows.TOKEN_QUERY|windows.TOKEN_ASSIGN_PRIMARY, &self); err != nil {
		return fmt.Errorf("OpenProcessToken: %w", err)
	}
	defer self.Close()
	admins, err := windows.StringToSid(administratorsSIDText)
	if err != nil {
		return err
	}
	disable := windows.SIDAndAttributes{Sid: admins}
	var restricted windows.Token
	// CreateRestrictedToken(existing, flags, 1 SID to disable, none
	// deleted, no restricting SIDs, &new)
	if r, _, err := procCreateRestricted.Call(uintptr(self), 0, 1, uintptr(unsafe.Pointer(&disable)), 0, 0, 0, 0, uintptr(unsafe.Pointer(&restricted))); r == 0 {
		return fmt.Errorf("CreateRestrictedToken: %w", err)
	}
	defer restricted.Close()
	var imp windows.Token
	if err := windows.DuplicateTokenEx(restricted, windows.TOKEN_IMPERSONATE|windows.TOKEN_QUERY, nil, windows.SecurityImpersonation, windows.TokenImpersonation, &imp); err != nil {
		return fmt.Errorf("DuplicateTokenEx: %w", err)
	}
	defer imp.Close()
	if member, err := imp.IsMember(admins); err != nil || member {
		return fmt.Errorf("the restricted token still counts as an administrator (%v)", err)
	}
	// An event only Administrators may open, as a control: that the
	// restricted token is refused there shows the token works, whatever
	// the pipe does.
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;GA;;;BA)")
	if err != nil {
		return err
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	eventName := fmt.Sprintf(`Local\dmiclient-admins-only-%d`, os.Getpid())
	event16, _ := windows.UTF16PtrFromString(eventName)
	ev, err := windows.CreateEvent(sa, 0, 0, event16)
	if err != nil {
		return fmt.Errorf("CreateEvent: %w", err)
	}
	defer windows.CloseHandle(ev)
	if err := windows.SetThreadToken(nil, imp); err != nil {
		return fmt.Errorf("SetThreadToken: %w", err)
	}
	restrictedErr := open(pipe)
	var eventErr error
	if h, err := windows.OpenEvent(windows.EVENT_MODIFY_STATE, false, event16); err == nil {
		windows.CloseHandle(h)
	} else {
		eventErr = err
	}
	if err := windows.RevertToSelf(); err != nil {
		return fmt.Errorf("RevertToSelf: %w", err)
	}
	ownErr := open(pipe)
	fmt.Println("restricted:", result(restrictedErr))
	fmt.Println("own:", result(ownErr))
	fmt.Println("restricted, an event open to Administrators only:", result(eventErr))
	return nil
}

// usePlaceholder opens and closes the pipe once. go-winio's listener keeps
// a first pipe instance that only reserves the name; Windows keeps clients
// off it, but Wine 8 connects the first client to it, where nobody answers
// (test/fakecri does the same on its side). On Windows this is one
// connection the server accepts and sees closed.
func usePlaceholder(pipe string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := winio.DialPipeContext(ctx, pipe); err == nil {
		c.Close()
	}
}

// open opens the pipe as the thread's token allows, waiting while every
// instance is busy (the server makes a new one when it accepts the last
// client) for at most 10 seconds.
func open(pipe string) error {
	p, err := windows.UTF16PtrFromString(pipe)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING, 0, 0)
		if err == windows.ERROR_PIPE_BUSY && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil {
			return err
		}
		return windows.CloseHandle(h)
	}
}

func result(err error) string {
	if err == nil {
		return "opened"
	}
	if err == windows.ERROR_ACCESS_DENIED {
		return "access denied"
	}
	return err.Error()
}

// printDACL prints the DACL the pipe's server gave it, read through a
// client handle.
func printDACL(pipe string) error {
	usePlaceholder(pipe)
	p, err := windows.UTF16PtrFromString(pipe)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.READ_CONTROL, 0, nil, windows.OPEN_EXISTING, 0, 0)
		if err == windows.ERROR_PIPE_BUSY && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil {
			return err
		}
		defer windows.CloseHandle(h)
		sd, err := windows.GetSecurityInfo(h, windows.SE_KERNEL_OBJECT, windows.DACL_SECURITY_INFORMATION)
		if err != nil {
			return fmt.Errorf("GetSecurityInfo: %w", err)
		}
		fmt.Println("dacl:", sd.String())
		return nil
	}
}
