-- issue 25: the confirm's return_url (Stripe's), where the 3-D Secure page sends the shopper back.
-- Kept on the attempt the page is for (its provider_ref names the page); null when none was given.
alter table attempts add column return_url text;
