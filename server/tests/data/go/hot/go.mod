module embers.test/hot

go 1.19
