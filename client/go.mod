module github.com/checkoutd/checkoutd/client

go 1.22
