module github.com/checkoutd/checkoutd/client

go 1.26.8
