package workerconfig

import (
	"net"
	"strconv"
)

// RESTListener is the listener a worker advertises, as it will bind it.
type RESTListener struct {
	// Scheme is "http" or "https".
	Scheme string
	// Host is the listener's host as written ("" binds every interface).
	Host string
	// Port is the listener's port (never 0: AdvertisedURL's rule).
	Port int
}

// Address is the host:port to bind; an empty host binds every interface,
// as Jetty does.
func (l RESTListener) Address() string { return net.JoinHostPort(l.Host, strconv.Itoa(l.Port)) }

// AdvertisedListener is RESTOptions{}.AdvertisedListener.
func AdvertisedListener(p Properties) (RESTListener, error) {
	return RESTOptions{}.AdvertisedListener(p)
}

// AdvertisedListener returns the listener Connect advertises: the first one
// with the advertised scheme, else the first (RestServer.advertisedUrl).
// connect-init's self-probe binds it before the worker does, so that a
// request to the advertised URL that reaches this container is answered by
// connect-init. Errors are *Error, as for AdvertisedURL.
func (o RESTOptions) AdvertisedListener(p Properties) (RESTListener, error) {
	ls, err := o.listeners(p)
	if err != nil {
		return RESTListener{}, err
	}
	scheme, err := advertisedScheme(p)
	if err != nil {
		return RESTListener{}, err
	}
	l := ls[0]
	if c := findListener(ls, scheme); c != nil {
		l = *c
	}
	if l.port == 0 {
		return RESTListener{}, &Error{Property: "listeners", Problem: "uses port 0, so the port the worker will bind cannot be known in advance", Value: p["listeners"], Fix: "use a fixed port"}
	}
	return RESTListener{Scheme: l.scheme, Host: l.host, Port: l.port}, nil
}
