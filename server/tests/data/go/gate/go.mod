module embers.test/gate

go 1.19
